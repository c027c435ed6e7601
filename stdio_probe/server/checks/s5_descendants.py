"""S5: no descendant outlives the server, after its exit on stdin EOF and after SIGTERM.

Descendants are found by the server's marker in their environment and by its session, re-parented
ones included; what is still alive once it made no progress for SURVIVOR_GRACE after the server ended (a
window of no progress: progress.outlived) has outlived it. Once they are recorded, the probe ends the server's
whole process group and session and everything carrying its marker (Session.reap_tree); the record says which it
reaped, and what it still found after (session.outliving).

Its arms are S1's (eof) and S3's (sigterm): the same trigger, and every arm of those records what outlived the
server, so where they run S5 starts no server of its own (Probe.same_arms).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session
from stdio_probe.server.checks import s1_idle_eof, s3_sigterm

ID = "S5"
TITLE = "no descendant outlives the server (EOF exit, SIGTERM)"
ARMS = ("eof", "sigterm")
SAME_ARMS = {"eof": (s1_idle_eof.ID, "bug"), "sigterm": (s3_sigterm.ID, "bug")}


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """eof: S1's arm (stdin closed); sigterm: S3's (SIGTERM to the server's pid). A server that does not end
    within its bound gets SIGTERM, then SIGKILL, to its pid alone, so its descendants still get the chance to
    outlive it (session.outliving)."""
    return {"eof": s1_idle_eof.run_arm, "sigterm": s3_sigterm.run_arm}[arm]("bug", server, options)


def assess(record: dict) -> Finding:
    """Shown when a descendant was alive SURVIVOR_GRACE after the server ended."""
    if survivors := record["survivors"]:
        listed = ", ".join(f"{p['pid']} {p['cmdline']!r}" for p in survivors)
        reaped = f"{len(record['reaped'])} reaped by the probe, {len(record['alive_after_reap'])} alive after"
        return Finding(
            True,
            f"{len(survivors)} outlived the server: {listed} ({reaped})",
            f"{len(survivors)} outlived it: {survivors[0]['cmdline']}",
        )
    return Finding(
        False,
        f"no descendant outlived the server ({len(record['descendants_before'])} before)",
        "no descendant outlived it",
    )


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess), same_arms=SAME_ARMS)

"""S5: no descendant outlives the server, after its exit on stdin EOF and after SIGTERM.

Descendants are found by the server's marker in their environment and by its session, re-parented
ones included; what is still alive once it made no progress for SURVIVOR_GRACE after the server ended (a
window of no progress: progress.outlived) has outlived it. Once they
are recorded, the probe ends the server's whole process group and session and everything carrying
its marker (Session.reap_tree); the record says which it reaped, and what it still found after.
"""

from __future__ import annotations

from stdio_probe.core import progress, sample
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S5"
TITLE = "no descendant outlives the server (EOF exit, SIGTERM)"
ARMS = ("eof", "sigterm")
# seconds a descendant has to end once the server has: what outliving it means, the same in both methods (part
# of the check's trigger, not a guess that stands in for a proof)
SURVIVOR_GRACE = 0.5


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """eof: close stdin; sigterm: SIGTERM to the server's pid. A server that does not end within
    its bound gets SIGTERM (eof) or SIGKILL (sigterm) to its pid alone, so its descendants still
    get the chance to outlive it."""
    bound = options.window if arm == "eof" else min(options.window, session.SIGTERM_BOUND)

    def body(s: session.Session) -> dict:
        before = [p["pid"] for p in s.tree() if p["pid"] != s.child.pid]
        triggered_at = s.close_stdin() if arm == "eof" else s.terminate()
        by_itself = s.wait_exit(bound, triggered_at).exit_after_s is not None
        if not by_itself:
            s.child.stop_process_only()
        survivors = progress.outlived(lambda: _survivors(s), SURVIVOR_GRACE)
        reaped = s.reap_tree()
        return {
            "descendants_before": before,
            "server_ended_by_itself": by_itself,
            # what the reaping found was alive after the grace too: a scan can miss a pid hopper mid-hop
            "survivors": survivors or reaped,
            "reaped": reaped,
            "alive_after_reap": _survivors(s),
        }

    return session.run(server, options, body)


def _survivors(s: session.Session) -> list[dict]:
    return [
        {"pid": p["pid"], "cmdline": p["cmdline"]}
        for p in s.tree()
        if p["pid"] != s.child.pid and sample.is_live(p["pid"])
    ]


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


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

"""H4: descendants: nothing of the server's tree is alive SURVIVOR_GRACE (1 s) after the host has exited.

Trigger (bug arm, L9's shape): a server that starts a background child in its process group and exits
by itself at stdin EOF. Second pair (wrapper arm, typescript-sdk #2023's shape): a wrapper like npx or
uvx whose child is the real server, and that child ignores stdin EOF, so only a signal to the whole
tree ends it; its verdict is in the run's pairs, named in the reason. Host rule:
host_contract.end_server_group (kill what is left of the server's process group).
"""

from __future__ import annotations

from stdio_probe.hosts import session
from stdio_probe.model import Finding, Probe

ID = "H4"
TITLE = "descendants: nothing of the server's tree outlives the host"
ARMS = ("bug", "control", "wrapper")
PAIRS = {"wrapper": ("wrapper", "control")}
SCENARIOS = {"bug": "bg_child", "wrapper": "wrapper"}


def assess_bug(record: dict) -> Finding:
    """Shown when anything of the server's tree is alive SURVIVOR_GRACE after the host exited."""
    events = record["events"]
    if "stuck" in record:
        return Finding(
            None, f"the host never exited ({session.stuck_note(record['stuck'], 'the answer')})", "host never exited"
        )
    if survivors := record["survivors"]:
        listed = ", ".join(f"{s['pid']} {s['cmdline'][-60:]!r} (parent {s['ppid']})" for s in survivors)
        return Finding(
            True,
            f"{len(survivors)} alive {session.SURVIVOR_GRACE:g} s after the host exited: {listed}",
            f"{len(survivors)} alive after the host, parent {survivors[0]['ppid']}",
        )
    sigs = ", ".join(sorted({s["name"] for s in session.signals(events)})) or "no signal"
    return Finding(False, f"nothing of the server's tree alive after the host exited ({sigs})", "nothing left")


PROBE = Probe(ID, TITLE, ARMS, session.shutdown_arm(SCENARIOS), session.judged(assess_bug), pairs=PAIRS)

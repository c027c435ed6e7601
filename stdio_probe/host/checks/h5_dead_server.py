"""H5: dead server, stdout held: the host's call fails within the bound of the server's exit.

Trigger (L8's shape): at tools/call the server starts a child that holds its stdout's write end, then
exits 3 unanswered; the host's reader never sees EOF. Shown when the host is still waiting the window
(10 s) after the server's exit, or is proven waiting forever before that (fast method). Not shown when
the host exits (its call failed, and it closed). Host rule: host_contract.fail_when_exits (watch the
server's exit, not only its stdout).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.host import session

ID = "H5"
TITLE = "dead server, stdout held: the host's call fails instead of hanging"
ARMS = ("bug", "control")
SCENARIO = "die_mid_call"


def assess_bug(record: dict) -> Finding:
    """Shown when the host still waits on its call after the server died."""
    events = record["events"]
    died = session.first(events, "exit", code=3)  # the server that died mid-call: a list server may end first
    if died is None:
        return Finding(None, "the server never reached its exit mid-call", "server never died")
    if "stuck" in record:
        note = session.stuck_note(record["stuck"], "the server's exit")
        return Finding(True, f"call pending: {note} (a child holds its stdout)", note)
    # the server stamps its exit as it ends (in a signal's handler too), the probe the host's when it polls: a
    # host that gave up, or ended the server as it exited, can be gone before the server's stamp
    took = record["host_exit_t"] - died["t"]
    when = f"{took:.2f} s after" if took >= 0 else f"{-took:.2f} s before"
    return Finding(
        False,
        f"host exited {when} the server died (exit {record['host']['exit_code']})",
        f"host exited {when} the server died",
    )


PROBE = Probe(
    ID,
    TITLE,
    ARMS,
    session.shutdown_arm(SCENARIO, session.at("exit", code=3)),
    session.judged(assess_bug),
    slow_arms=session.HANG_ARMS,
)

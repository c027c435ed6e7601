"""H10: host killed: SIGKILL to the host mid-session; is a server that ignores stdin EOF left alive?

Trigger: the host is SIGKILLed while its tools/call is pending (the server holds the answer), the
server ignoring stdin EOF (SIGTERM ends it). Shown when the server is alive once it made no progress for
SURVIVOR_GRACE (1 s) after the kill (progress.outlived),
with its parent recorded (1, or a subreaper). A host that started more than one server (its list server
already ended, its call's alive) is judged on each (session.per_server): the signals named are that
server's own. The host's remedy on Linux: PR_SET_PDEATHSIG in the child before exec, or a supervisor that
kills the server's process group.
"""

from __future__ import annotations

from stdio_probe.core import progress
from stdio_probe.core.model import Finding, Host, Options, Probe, parent_of
from stdio_probe.host import session

ID = "H10"
TITLE = "host killed: no server left alive, orphaned"
ARMS = ("bug", "control")
SCENARIO = "ignore_eof,hold_call"


def run_arm(arm: str, host: Host, options: Options) -> dict:
    def body(r: session.HostRun) -> dict:
        called = r.wait_for_trigger(lambda events: session.first(events, "message", method="tools/call"))
        if not called:
            return {"killed_t": None, "survivors": []}
        killed = r.kill_host()
        return {"killed_t": killed, "survivors": progress.outlived(r.survivors, session.SURVIVOR_GRACE)}

    return session.arm(host, options, arm, SCENARIO, body)


def assess_bug(record: dict) -> Finding:
    """Shown when the server outlived the kill of its host by SURVIVOR_GRACE."""
    if record["killed_t"] is None:
        return Finding(None, session.contract_reached(record["events"]) or "no tools/call", "never called")
    sigs = ", ".join(sorted({s["name"] for s in session.signals(record["events"])})) or "no signal"
    if survivors := record["survivors"]:
        parents = ", ".join(f"{s['pid']} {parent_of(s)}" for s in survivors)
        return Finding(
            True,
            f"server alive {session.SURVIVOR_GRACE:g} s after the host was killed: {parents} ({sigs})",
            f"server left alive, {parent_of(survivors[0])}",
        )
    return Finding(False, f"nothing of the server alive 1 s after the host was killed ({sigs})", "server ended")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.judged(session.per_server(assess_bug), through=None))

"""H11: mute server: the host gives up on a call that the server reads and never answers.

Trigger: the server does the contract up to tools/call, reads the call, and answers nothing from then on,
waiting on stdin in poll(2) with no timeout (python-sdk #396: a server left alive and mute by a fatal tool).
Shown when every host thread is proven waiting with no timeout (fast method), or the host is still waiting
the window after the call (a window of no progress, as every window: a loaded machine slows a host on its way
to giving up, it does not make it stuck), or still busy at the outer bound. Not shown
when the host gave up first: it cancelled the call (notifications/cancelled), closed the server's stdin,
signalled it, or exited (its call failed); each is recorded with its time after the call (the host's own
timeout), the EOF and signals those of the server that read the call. Host rule: a request timeout (the
Python SDK's read_timeout_seconds, None by default), then host_contract.shutdown_child.
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Host, Options, Probe
from stdio_probe.host import session

ID = "H11"
TITLE = "mute server: the host gives up on a call that is never answered"
ARMS = ("bug", "control")
SCENARIO = "mute"
CALLED = session.at("message", method="tools/call")


def run_arm(arm: str, host: Host, options: Options) -> dict:
    def body(r: session.HostRun) -> dict:
        return {"bound_s": options.window, **r.wait_host(options, CALLED)}

    return session.arm(host, options, arm, SCENARIO, body)


def gave_up(record: dict) -> list[tuple[float, str]]:
    """What the host did that ends its wait on the call, each with its time from the call, in order: a cancel,
    the server's stdin closed, the first signal, its own exit. The probe's own ending is not among the events; the
    server's are those of the one that read the call (a host that starts a server per operation ended its list
    server before the call)."""
    call = session.first(record["events"], "message", method="tools/call")
    events, called = [e for e in record["events"] if e.get("launch") == call.get("launch")], call["t"]
    found = []
    if cancel := session.first([e for e in events if e["t"] >= called], "message", method="notifications/cancelled"):
        found.append((cancel["t"], "cancel"))
    if eof := session.first(events, "stdin_eof"):
        found.append((eof["t"], "stdin closed"))
    if sigs := session.signals(events):
        found.append((sigs[0]["t"], sigs[0]["name"]))
    if record.get("exited"):
        found.append((record["host_exit_t"], f"exit {record['host']['exit_code']}"))
    return sorted((t - called, what) for t, what in found)


def assess_bug(record: dict) -> Finding:
    """Shown when the host still waits on the call with nothing done to end that wait; not shown when it gave up
    (the first step and its time decide, every step is recorded)."""
    steps = gave_up(record)
    if steps:
        done = ", ".join(f"{what} at {after:+.2f} s" for after, what in steps)
        later = f"; then {session.stuck_note(record['stuck'], 'the call')}" if "stuck" in record else ""
        after, what = steps[0]
        return Finding(False, f"host gave up on the call: {done} (from the call){later}", f"{what} at {after:+.2f} s")
    note = session.stuck_note(record["stuck"], "the call")
    return Finding(True, f"call pending: {note} (the server read it and never answers)", note)


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.judged(assess_bug), slow_arms=session.HANG_ARMS)

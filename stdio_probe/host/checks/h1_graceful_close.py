"""H1: graceful close: the host closes the server's stdin and lets it exit by itself before any signal.

Trigger: a server that needs EXIT_DELAY (0.5 s) of cleanup after stdin EOF before it exits 0. Shown
when the server got a signal (or was killed) before its own exit, when its stdin was never closed while
the host ran, or when the host hung (proof or window). The order and times are recorded; a host that
started more than one server is judged on each (session.per_server). Host rule:
host_contract.shutdown_child (close stdin, drain, bounded wait, then SIGTERM).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.host import session

ID = "H1"
TITLE = "graceful close: stdin closed, the server exits before any signal"
ARMS = ("bug", "control")
SCENARIO = "slow_exit"


def assess_bug(record: dict) -> Finding:
    """Shown on a signal before the server's own exit, stdin never closed, or the host hung."""
    events = record["events"]
    eof, sigs = session.first(events, "stdin_eof"), session.signals(events)
    exit_event = session.first(events, "exit")
    if "stuck" in record:
        note = session.stuck_note(record["stuck"], "the answer")
        return Finding(True, f"{note}; stdin {'closed' if eof else 'never closed'}", note)
    host_exit = record["host_exit_t"]
    if eof is None or (host_exit is not None and eof["t"] >= host_exit):
        return Finding(
            True, "stdin never closed while the host ran (EOF only at the host's exit)", "stdin never closed"
        )
    if sigs and (exit_event is None or sigs[0]["t"] < exit_event["t"]):
        after = sigs[0]["t"] - eof["t"]
        note = f"{sigs[0]['name']} {after:.2f} s after stdin EOF, before the server's own exit ({0.5:g} s cleanup)"
        return Finding(True, note, f"{sigs[0]['name']} {after:.2f} s after EOF")
    if exit_event is None:
        return Finding(True, "the server was killed (no exit of its own) after stdin EOF", "server killed")
    took = exit_event["t"] - eof["t"]
    note = f"stdin EOF, then the server's own exit {took:.2f} s later, no signal"
    return Finding(False, note, f"EOF, own exit {took:.2f} s later")


PROBE = Probe(ID, TITLE, ARMS, session.shutdown_arm(SCENARIO), session.judged(session.per_server(assess_bug)))

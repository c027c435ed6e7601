"""H2: EOF ignored: the host escalates to a signal within the bound (the window, 10 s) and then exits.

Trigger: a server that ignores stdin EOF (SIGTERM still ends it). Shown when no signal reached it within
the bound after its stdin EOF (or after the answer, when stdin was never closed), when the host hung
(proof or window), or when the host exited leaving it alive unsignalled. Host rule:
host_contract.shutdown_child (bounded wait, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

from stdio_probe.hosts import session
from stdio_probe.model import Finding, Probe

ID = "H2"
TITLE = "EOF ignored: the host escalates to a signal within the bound, then exits"
ARMS = ("bug", "control")
SCENARIO = "ignore_eof"


def escalation(record: dict) -> Finding:
    """H2 and H3 (the contract already asked: session.judged): after the answer, did a signal reach the server
    within the bound, did the host exit, what was left."""
    events, bound = record["events"], record["bound_s"]
    eof, sigs = session.first(events, "stdin_eof"), session.signals(events)
    since, what = eof, "EOF"
    if since is None:
        since, what = session.first(events, "answered"), "the answer"
    # a signal between the answer's write and its log line (the host read it at once); a host exits 0 only once
    # its call succeeded (the contract), so the answer was written: a signal before it stays no evidence
    if since is None and sigs and record["host"]["exit_code"] == 0:
        since, what = session.first(events, "message", method="tools/call"), "the call (before the answer's log)"
    if since is None:
        return Finding(None, "the server never answered the call (the host left first)", "no answer")
    first_sig = f"{sigs[0]['name']} {sigs[0]['t'] - since['t']:.2f} s after {what}" if sigs else "no signal"
    if "stuck" in record:
        note = session.stuck_note(record["stuck"], "the answer")
        return Finding(True, f"{note}; the server got {first_sig}", f"host hangs, {first_sig}")
    if sigs and sigs[0]["t"] - since["t"] > bound:
        return Finding(True, f"{first_sig}, beyond the {bound:g} s bound", first_sig)
    if survivors := record["survivors"]:
        listed = ", ".join(f"{s['pid']} (parent {s['ppid']})" for s in survivors)
        return Finding(
            True, f"host exited leaving the server alive: {listed}; it got {first_sig}", f"left alive, {first_sig}"
        )
    return Finding(False, f"{first_sig}, host exit {record['host']['exit_code']}, nothing left", first_sig)


PROBE = Probe(ID, TITLE, ARMS, session.shutdown_arm(SCENARIO), session.judged(escalation))

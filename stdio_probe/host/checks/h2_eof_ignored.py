"""H2: EOF ignored: the host escalates to a signal within the bound (the window, 10 s) and then exits.

Trigger: a server that ignores stdin EOF (SIGTERM still ends it). Shown when no signal reached it within
the bound after its stdin EOF (or after the answer, when stdin was never closed), a bound of no progress:
the host waited without progress (its idle_stretches) for the bound in a row before its first signal; when
the host hung (proof or window) or was still busy at the outer bound; or when the host exited leaving it
alive unsignalled. A host that started more than
one server (a server per operation, several at once) is judged on each (session.per_server), the note
naming it. Host rule: host_contract.shutdown_child (bounded wait, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

from stdio_probe.core import progress
from stdio_probe.core.model import Finding, Probe, parent_of
from stdio_probe.host import session

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
    # its call succeeded (the contract), so the answer was written: a signal before it stays no evidence. The
    # request timed from is the last before the signal: the call, or a list server's tools/list (per_server)
    if since is None and sigs and record["host"]["exit_code"] == 0:
        before = [e for e in events if e["t"] < sigs[0]["t"]]
        if any(e["event"] == "messages_unlogged" and e["kind"] not in ("answered", "bad_line") for e in before):
            # the scenario server stopped logging a kind that holds the host's messages (a method's, or every kind
            # past the first 50): the last request before the signal may be one it did not log, and a signal
            # timed from an earlier one reads late
            return Finding(None, "the host's messages past the log's bound before the signal", "requests unlogged")
        asked = [e for e in before if e["event"] == "message" and e.get("id") is not None]
        since = asked[-1] if asked else None
        method = asked[-1]["method"] if asked else None
        what = "the call (before the answer's log)" if method == "tools/call" else f"its {method} (before any EOF)"
    if since is None:
        return Finding(None, "the server never answered the call (the host left first)", "no answer")
    first_sig = f"{sigs[0]['name']} {sigs[0]['t'] - since['t']:.2f} s after {what}" if sigs else "no signal"
    if "stuck" in record:
        note = session.stuck_note(record["stuck"], "the answer")
        hangs = "host busy" if record["stuck"]["decided_by"] == "busy" else "host hangs"
        return Finding(True, f"{note}; the server got {first_sig}", f"{hangs}, {first_sig}")
    stretches = record.get("idle_stretches", [])  # a stored record made before they were kept has none
    if sigs and (idle := progress.longest_idle(stretches, since["t"], sigs[0]["t"])) >= bound:
        note = f"{first_sig}, the host {idle:.1f} s without progress first: beyond the {bound:g} s bound"
        return Finding(True, note, first_sig)
    if survivors := record["survivors"]:
        listed = ", ".join(f"{s['pid']} ({parent_of(s)})" for s in survivors)
        return Finding(
            True, f"host exited leaving the server alive: {listed}; it got {first_sig}", f"left alive, {first_sig}"
        )
    return Finding(False, f"{first_sig}, host exit {record['host']['exit_code']}, nothing left", first_sig)


PROBE = Probe(ID, TITLE, ARMS, session.shutdown_arm(SCENARIO), session.judged(session.per_server(escalation)))

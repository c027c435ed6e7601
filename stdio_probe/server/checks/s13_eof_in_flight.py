"""S13: stdin EOF while a tool call runs: the call still gets its result before stdout ends, and the server exits.

EOF ends the input, not the work already asked for (python-sdk #2678): the Python SDK cancels a call in flight at
EOF, answers it {"code": -32000, "message": "Connection closed"} (its tool sees CancelledError) and exits 0, so the
host's call fails though the server had read it. The opposite defect (go-sdk's consumers): a handler still running
keeps the server from exiting after EOF. S7 sends pings only, and counts an error as an answer.

The bug arm sends --slow-call and closes stdin EOF_DELAY after writing it, while the tool runs; the control arm
closes stdin only once the call's answer came, which is the tool's real result. An error (a JSON-RPC error, or a
result with isError) in the bug arm is one the server made at EOF only where the control got a result for the same
call on a fresh process: decide's rule says so (a control without a result is no evidence: inconclusive), and
both answers are recorded. Whether the server exits is the exit watch's (observe.watch) within the window after
EOF: no proof, since a server that drains its stdout has no pipe the proof could pin it to (method.md).
"""

from __future__ import annotations

import time

from stdio_probe.core import eras
from stdio_probe.core.model import Finding, Options, Probe, Server, shorten
from stdio_probe.server import session

ID = "S13"
TITLE = "stdin EOF while a call runs: it gets its result, the server exits"
ARMS = ("bug", "control")
CALL_ID = 1
EOF_DELAY = 0.05  # seconds from the call's write to stdin EOF in the bug arm (python-sdk #2678's trigger)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """bug: the call, EOF EOF_DELAY later; control: the call, its answer, EOF. Then until stdout ends and the server
    exits, each within a window of no progress after EOF (wire.StdoutReader.wait_progressing, Session.watch)."""
    if server.slow_call is None:
        return {"not_applicable": "needs --slow-call 'TOOL {json arguments}' (a call that takes 0.5 s or more)"}
    tool, arguments = server.slow_call
    call = {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}

    def body(s: session.Session) -> dict:
        if not s.send(call):
            return {"error": f"tools/call not sent: {s.write_blocked or 'stdin closed'}"}
        sent = time.monotonic()
        if arm == "bug":
            s.reader.wait_for(lambda r: CALL_ID in r.answers, EOF_DELAY)
        else:
            s.reader.wait_answer(CALL_ID, options.window)
        answered_at = time.monotonic() if CALL_ID in s.reader.answers else None
        record = {"eof_in_flight": arm == "bug", "answered_before_eof": answered_at is not None}
        if arm == "control" and answered_at is None:
            return {**record, "answer": outcome(None), "answer_after_call_s": None}
        eof_at = s.close_stdin()
        record["eof_after_call_s"] = round(eof_at - sent, 3)
        if answered_at is None and s.reader.wait_progressing(lambda r: CALL_ID in r.answers, options.window):
            answered_at = time.monotonic()
        record["stdout_ended"] = s.reader.wait_progressing(lambda r: r.eof.is_set(), options.window)
        record["answer"] = outcome(s.answer(CALL_ID))
        record["answer_after_call_s"] = None if answered_at is None else round(answered_at - sent, 3)
        return record | s.watch(eof_at, options.window).record("eof")

    return session.run(server, options, body)


def outcome(answer: dict | None) -> dict:
    """The call's answer in brief: kind "result", "tool_error" (a result with isError: the call failed), "error"
    (a JSON-RPC error) or "none"; text, a few words of it."""
    if answer is None:
        return {"kind": "none", "text": "no answer"}
    result = answer.get("result")
    if not isinstance(result, dict):
        return {"kind": "error", "text": eras.answer_text(answer)}
    content = result.get("content")
    first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
    said = shorten(str(first.get("text", first.get("type", ""))), 60)
    if result.get("isError"):
        return {"kind": "tool_error", "text": f"isError result {said!r}"}
    return {"kind": "result", "text": f"result {said!r}"}


def assess(record: dict) -> Finding:
    """Bug arm: shown when the call had no answer before stdout ended, or an error (JSON-RPC or isError), or the
    server was alive at the window after EOF; no evidence when the answer came before EOF (not in flight).
    Control: it must get a result (else no evidence: nothing to compare the bug arm's answer with) and exit."""
    answer, took = record["answer"], record["answer_after_call_s"]
    answered = answer["text"] + ("" if took is None else f" {took:.2f} s after the call")
    if record["eof_in_flight"] and record["answered_before_eof"]:
        return Finding(None, f"{answered}, before stdin closed: not in flight at EOF", "answered before EOF")
    if not record["eof_in_flight"] and answer["kind"] != "result":
        note = f"with stdin open, {answered}: no result to compare the bug arm's answer with"
        return Finding(None, note, f"{answer['text']} with stdin open")
    eof = f"stdin closed {record['eof_after_call_s']:.2f} s after the call"
    if record["alive_at_decision"]:
        alive = f"alive {record['decided_after_eof_s']:.1f} s after EOF"
        if record["decided_by"] == "busy":
            alive = session.busy_note(record["decided_after_eof_s"], "EOF")
        return Finding(True, f"{eof}; {answered}; {alive}, ended by {record['ended_by']}", alive)
    how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
    ended = f"{how} {record['exit_after_eof_s']:.2f} s after EOF"
    if answer["kind"] == "result":
        return Finding(False, f"{eof}; {answered}; {ended}", f"{answer['kind']}, {ended}")
    before = "before stdout ended" if record["stdout_ended"] else "at the window (stdout still open)"
    return Finding(True, f"{eof}; {answered} {before}; {ended}", f"{answer['text']} at EOF, {how}")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

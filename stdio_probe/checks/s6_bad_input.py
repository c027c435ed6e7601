"""S6: a line of invalid JSON and a line of invalid UTF-8 on stdin, then ping (server/discover in
2026-07-28): the server still answers it with a result."""

from __future__ import annotations

from stdio_probe import eras
from stdio_probe.checks import session
from stdio_probe.model import Finding, Options, Server

ID = "S6"
TITLE = "invalid JSON and invalid UTF-8 lines, then ping answered"
ARMS = ("bug",)
BAD_LINES = (b'{"jsonrpc": "2.0", "id": 7, "method": \n', b'{"jsonrpc": "2.0", "method": "\xff\xfe"}\n')
PING_ID = 2


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """After the opening, both bad lines, then the era's liveness request; wait (progress-bounded) for its answer."""

    def body(s: session.Session) -> dict:
        if not s.initialize(options):
            return {"initialized": False}
        ping = s.liveness_request(PING_ID)
        sent = all(s.send(line) for line in BAD_LINES) and s.send(ping)
        seen = sent and s.reader.wait_answer(PING_ID, options.window)
        answer = s.answer(PING_ID)
        return {
            "initialized": True,
            "input_accepted": sent,
            "ping_method": ping["method"],
            "ping_answer": eras.answer_text(answer) if seen else "no answer",
            "ping_answered": seen,
            "alive_after": s.child.process.poll() is None,
        }

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the liveness request got no answer after the bad lines; an error answer (the
    request not served: method not found) is no evidence either way."""
    if not record.get("initialized"):
        return session.not_initialized(record)
    ping, answer = record.get("ping_method", "ping"), record.get("ping_answer", "result")
    if record["ping_answered"] and answer.startswith("error"):
        return Finding(None, f"{ping} got {answer} after the bad lines: not served, no evidence", f"{ping} not served")
    if record["ping_answered"]:
        note = f"{ping} answered after invalid JSON and invalid UTF-8"
        return Finding(False, note, f"{ping} answered after bad lines")
    if record["alive_after"] and (why := session.blocked_on_client(record)):
        return Finding(None, f"{ping} unanswered, not for the bad lines: {why}", why)
    if not record["alive_after"]:
        return Finding(
            True,
            f"exited {record['exit_code']} after the bad lines, {ping} unanswered",
            f"exited {record['exit_code']} on bad input",
        )
    return Finding(True, f"alive, but {ping} unanswered after the bad lines", f"{ping} unanswered after bad lines")

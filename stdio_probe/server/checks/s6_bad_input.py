"""S6a and S6b, one bad line each, then ping (server/discover in 2026-07-28): the server still answers
it with a result (the mechanism they share).

The two bad lines are judged apart because their fixes are opposite: leanspec-mcp dies only on
invalid UTF-8 and mcp-cron goes mute only on invalid JSON. s6a_invalid_json and s6b_invalid_utf8
are the checks; this module sends their line and judges what followed.
"""

from __future__ import annotations

from stdio_probe.core import eras
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

PING_ID = 2


def run_bad_line(line: bytes, server: Server, options: Options) -> dict:
    """After the opening, line, then the era's liveness request (ping; server/discover in 2026-07-28);
    wait (progress-bounded) for its answer."""

    def body(s: session.Session) -> dict:
        ping = s.liveness_request(PING_ID)
        sent = s.send(line) and s.send(ping)
        seen = sent and s.reader.wait_answer(PING_ID, options.window)
        return {
            "bad_line": line.decode("utf-8", "backslashreplace"),
            "input_accepted": sent,
            "ping_method": ping["method"],
            "ping_answer": eras.answer_text(s.answer(PING_ID)) if seen else "no answer",
            "ping_answered": seen,
            "alive_after": s.child.process.poll() is None,
        }

    return session.run(server, options, body)


def assess_bad_line(record: dict, what: str) -> Finding:
    """Shown when the liveness request got no answer after the bad line (what names it); an error answer
    (the request not served: method not found) is no evidence either way."""
    ping, answer = record.get("ping_method", "ping"), record.get("ping_answer", "result")
    if record["ping_answered"] and answer.startswith("error"):
        return Finding(None, f"{ping} got {answer} after {what}: not served, no evidence", f"{ping} not served")
    if record["ping_answered"]:
        return Finding(False, f"{ping} answered after {what}", f"{ping} answered after {what}")
    if record["alive_after"] and (why := session.blocked_on_client(record)):
        return Finding(None, f"{ping} unanswered, not for {what}: {why}", why)
    if not record["alive_after"]:
        how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
        return Finding(True, f"ended ({how}) after {what}, {ping} unanswered", f"{how} on {what}")
    return Finding(True, f"alive, but {ping} unanswered after {what}", f"{ping} unanswered after {what}")


def bad_line_probe(probe_id: str, title: str, line: bytes, what: str) -> Probe:
    """The check of one bad line (S6a, S6b): one arm, line sent then the liveness request, judged by
    assess_bad_line with what naming the line."""
    return Probe(
        probe_id,
        title,
        ("bug",),
        lambda arm, server, options: run_bad_line(line, server, options),
        session.opened(lambda record: assess_bad_line(record, what)),
    )

"""S4: stdout carries only JSON-RPC messages, one per line, from start-up to exit.

A banner or a log line on stdout breaks every client that parses it as the protocol.
"""

from __future__ import annotations

from stdio_probe.checks import session
from stdio_probe.model import Finding, Options, Server

ID = "S4"
TITLE = "stdout carries only JSON-RPC lines, start-up to exit"
ARMS = ("bug",)
PING_ID = 2


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """Read stdout from the start: the era's opening, its liveness request (ping; server/discover in
    2026-07-28), stdin EOF, until the exit (or the window)."""

    def body(s: session.Session) -> dict:
        initialized = s.initialize(options)
        if initialized and s.send(s.liveness_request(PING_ID)):
            s.reader.wait_answer(PING_ID, options.window)
        s.close_stdin()
        exited = s.wait_exit(options.window)
        s.reader.wait_for(lambda r: r.eof.is_set(), 1.0 if exited is not None else 0.0)
        return {"initialized": initialized, "exited_by_itself": exited is not None}

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown on the first line that is not a JSON-RPC message; no evidence without any exchange."""
    stdout = record.get("stdout", {})
    if offending := stdout.get("offending"):
        text = offending["text"]
        where = f"line {offending['line']}" + (
            f" ({offending['bytes']} bytes, too long to parse)" if offending.get("unparsed") else ""
        )
        return Finding(True, f"{where} of stdout is not JSON-RPC: {text!r}", f"{where}: {text!r}")
    if not record.get("initialized"):
        return session.not_initialized(record)
    return Finding(
        False,
        f"all {stdout['lines']} stdout lines JSON-RPC ({stdout['bytes']} bytes)",
        f"all {stdout['lines']} lines JSON-RPC",
    )

"""S4: stdout carries only MCP's JSON-RPC messages, one per line, from start-up to exit.

A banner or a log line on stdout breaks every client that parses it as the protocol; so does a
message the client's SDK cannot parse (leanspec-mcp answers notifications/initialized with
{"jsonrpc": "2.0", "result": null}, which mcp 2.3.0 logs as "Failed to parse JSONRPC message").
Every line is judged by mcp_schema.Exchange: valid against the MCP schema of the revision the
server speaks, responses only to requests sent, each result of its request's type.
"""

from __future__ import annotations

from stdio_probe.core import mcp_schema
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S4"
TITLE = "stdout carries only MCP JSON-RPC messages, start-up to exit"
ARMS = ("bug",)
PING_ID = 2
LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
CALL_ID = 4
LINE_CAP = 8 * 1024 * 1024  # a large call's answer is parsed whole to be judged
STDOUT_END = 1.0  # seconds without progress after the exit by which stdout must have ended for the reading


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """Read stdout from the start: the era's opening, its liveness request (ping; server/discover in
    2026-07-28), tools/list, the large call if given, stdin EOF, the exit (or the window)."""

    def body(s: session.Session) -> dict:
        requests = [s.liveness_request(PING_ID), LIST]
        if server.large_call is not None:
            tool, arguments = server.large_call
            params = {"name": tool, "arguments": arguments}
            requests.append({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": params})
        initialized = s.initialize(options)
        for request in requests if initialized else []:
            if not s.send(request) or not s.reader.wait_answer(request["id"], options.window):
                break
        exited = s.wait_exit(options.window, s.close_stdin()).exit_after_s is not None
        if exited:  # what it wrote last, still on its way (a descendant may hold stdout: a window of no progress)
            s.reader.wait_progressing(lambda r: r.eof.is_set(), STDOUT_END)
        return {
            "initialized": initialized,
            "exited_by_itself": exited,
            "answered": sorted(key for key in s.reader.answers if isinstance(key, int)),
            "schema": {"negotiated": s.exchange.negotiated, "judged_by": s.exchange.revision},
        }

    return session.run(server, options, body, opening=False, judged=True, line_cap=LINE_CAP)


def assess(record: dict) -> Finding:
    """Shown on the first line that is not an MCP JSON-RPC message; no evidence without any exchange."""
    stdout = record.get("stdout", {})
    if offending := stdout.get("offending"):
        text = offending["text"]
        where = f"line {offending['line']}" + (
            f" ({offending['bytes']} bytes, too long to parse)" if offending.get("unparsed") else ""
        )
        why = offending.get("why", "not JSON-RPC")
        return Finding(True, f"{where} of stdout: {why}: {text!r}", f"{where}: {text[:60]!r}")
    if not record.get("initialized"):
        return session.not_initialized(record)
    judged = record.get("schema", {}).get("judged_by", mcp_schema.ASKED)
    return Finding(
        False,
        f"all {stdout['lines']} stdout lines valid MCP {judged} JSON-RPC ({stdout['bytes']} bytes)",
        f"all {stdout['lines']} lines valid MCP",
    )


PROBE = Probe(ID, TITLE, ARMS, run_arm, assess)

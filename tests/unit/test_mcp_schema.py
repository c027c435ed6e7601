"""mcp_schema.Exchange: what S4 accepts and refuses, line by line, against the shipped MCP schemas."""

from __future__ import annotations

import pytest

from stdio_probe.core import mcp_schema

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
SERVER_INFO = {"name": "s", "version": "1"}


def exchange(version: str = "2025-06-18") -> mcp_schema.Exchange:
    found = mcp_schema.Exchange()
    found.sent(INIT)
    result = {"protocolVersion": version, "capabilities": {}, "serverInfo": SERVER_INFO}
    assert found.judge({"jsonrpc": "2.0", "id": 0, "result": result}) is None
    return found


def test_the_released_revisions_are_shipped():
    assert {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} <= set(mcp_schema.REVISIONS)


def test_the_negotiated_revision_judges_from_then_on_and_an_unknown_one_by_the_one_before():
    assert exchange().revision == "2025-06-18"
    assert exchange("2025-09-01").revision == "2025-06-18"


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({"jsonrpc": "2.0", "result": None}, "not a JSON-RPC message"),  # leanspec-mcp's answer to a notification
        ({"jsonrpc": "2.0", "id": 9, "result": {}}, "no request awaiting an answer"),
    ],
)
def test_a_response_must_be_a_message_and_answer_a_request_sent(message, why):
    found = exchange()
    found.sent({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert why in found.judge(message)


def test_a_second_answer_to_the_same_request_is_refused():
    found = exchange()
    found.sent({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert found.judge({"jsonrpc": "2.0", "id": 2, "result": {}}) is None
    assert "no request awaiting" in found.judge({"jsonrpc": "2.0", "id": 2, "result": {}})


def test_a_result_is_judged_by_its_requests_type():
    found = exchange()
    found.sent({"jsonrpc": "2.0", "id": 4, "method": "tools/call"})
    why = found.judge({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text"}]}})
    assert "not a CallToolResult of MCP 2025-06-18" in why


def test_a_servers_notification_and_log_message_pass():
    params = {"level": "info", "data": "started"}
    assert exchange().judge({"jsonrpc": "2.0", "method": "notifications/message", "params": params}) is None

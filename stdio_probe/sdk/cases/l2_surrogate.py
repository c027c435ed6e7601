"""L2: one lone-surrogate string kills the server's writer and the whole session.

os.fsdecode(b"bad-\\xff-name") yields "bad-\\udcff-name". It validates, but
model_dump_json() fails inside the server's stdout_writer in
mcp/server/stdio.py, where only anyio.ClosedResourceError is caught: the
writer task dies, the task group tears the session down, and the valid
message queued after the bad one is never delivered.

The mitigated arm sends the bug arm's name with the server passing every
outbound payload through host_contract.sanitize_outbound first.
bug_server_api and control_server_api are the bug/control pair through the
SDK's high-level server (MCPServer, FastMCP in 1.x): a tool returns the name.
There the ping goes once the tool's answer arrived or stdout ended, or after
SETTLE s: part of the trigger, the same in both methods (a ping sent early is
still answered by a live session before the window ends).
"""

from __future__ import annotations

import re
from contextlib import suppress

from stdio_probe.core import wire
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.core.spawn import Child
from stdio_probe.sdk import fixture_arm, fixture_log

ID = "L2"
TITLE = "lone surrogate kills the server writer and the session"
# the same pair through the SDK's high-level server (MCPServer / FastMCP): recorded, judged beside (decide.PAIRS)
EXTRA_ARMS = ("bug_server_api", "control_server_api")
PAIRS = {"server API": ("bug_server_api", "control_server_api")}
NAMES = {"bug": b"bad-\xff-name", "control": b"good-name", "mitigated": b"bad-\xff-name"}
VALID_AFTER = "valid-after-bad"
SETTLE = 1.0  # server API: after the tool returned, how long its answer (or the end of stdout) may take
_EXCEPTION = re.compile(r"^[ |+]*([A-Za-z_][\w.]*(?:Error|Exception|ExceptionGroup)):", re.M)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """One request whose answer carries the arm's name, then a valid message, then EOF.

    Transport arms: fixture_stdio_writer.py answers ping, then sends a notification. Server-API
    arms: MCPServer (FastMCP in 1.x) answers tools/call with the name, then the probe's ping.
    """
    server_api = arm.endswith("_server_api")
    name = NAMES[arm.removesuffix("_server_api")]
    script = "fixture_server_api.py" if server_api else "fixture_stdio_writer.py"
    args = ["--name-hex", name.hex()]
    if not server_api:
        args += ["--then-notify", VALID_AFTER, *(["--sanitize"] if arm == "mitigated" else [])]
    with fixture_arm.started(sdk, script, args) as fixture:
        child = fixture.child
        reader = wire.StdoutReader(child)
        if server_api:
            _server_api_exchange(child, reader, fixture.events, options)
        else:
            wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
            wire.close_stdin(child)  # the fixture answers request 1 in full before it reads EOF
        exited = child.wait_for(lambda: child.process.poll() is not None, options.window)
        if not exited:
            child.stop()
        reader.join(1.0)
        valid = _is_answer_to_ping if server_api else _is_valid_after
        record = fixture.finish(
            {
                "name_hex": name.hex(),
                "exited_by_itself": exited,
                "stdout_bytes": reader.bytes,
                "messages": reader.messages,
                "response_arrived": any(m.get("id") == 1 for m in reader.messages),
                "valid_message_arrived": any(valid(m) for m in reader.messages),
            }
        )
    return {**record, "exceptions": _EXCEPTION.findall(record["stderr"])}


def _server_api_exchange(child: Child, reader: wire.StdoutReader, events: fixture_log.EventsFile, options: Options):
    """initialize, tools/call; once the tool returned and its answer arrived or stdout ended (or SETTLE), a ping."""
    if not wire.initialize(child, reader, options.window):
        return
    wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "payload"}}, reader)
    child.wait_for(lambda: any(e["event"] == "tool_returned" for e in events.events()), options.window)
    reader.wait_for(lambda r: 1 in r.answers, SETTLE)
    with suppress(BrokenPipeError):  # the session may have died with the bad answer
        wire.send(child, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    with suppress(BrokenPipeError):
        wire.close_stdin(child)


def _is_answer_to_ping(message: dict) -> bool:
    return message.get("id") == 2 and "result" in message


def _is_valid_after(message: dict) -> bool:
    return message.get("method") == "notifications/message" and message.get("params", {}).get("data") == VALID_AFTER


def assess(record: dict) -> Finding:
    """Shown when the valid message after the response never arrived: the session died."""
    exceptions = record["exceptions"]
    ending = f"exit {record['exit_code']}" + (f", stderr {exceptions[-1]}" if exceptions else "")
    if record["valid_message_arrived"]:
        return Finding(False, f"valid message arrived, {record['stdout_bytes']} bytes, {ending}", "session alive")
    cause = f": {exceptions[-1].rsplit('.', 1)[-1]}" if exceptions else f", exit {record['exit_code']}"
    short = f"session died{cause}"
    return Finding(True, f"valid message lost, {record['stdout_bytes']} bytes delivered, {ending}", short)


PROBE = Probe(ID, TITLE, (*CASE_ARMS, *EXTRA_ARMS), run_arm, assess, pairs=PAIRS)

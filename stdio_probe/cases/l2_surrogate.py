"""L2: one lone-surrogate string kills the server's writer and the whole session.

os.fsdecode(b"bad-\\xff-name") yields "bad-\\udcff-name". It validates, but
model_dump_json() fails inside the server's stdout_writer in
mcp/server/stdio.py, where only anyio.ClosedResourceError is caught: the
writer task dies, the task group tears the session down, and the valid
message queued after the bad one is never delivered.

The mitigated arm sends the bug arm's name with the server passing every
outbound payload through host_contract.sanitize_outbound first.
"""

from __future__ import annotations

import re

from stdio_probe import wire
from stdio_probe.model import Finding, Options, Sdk
from stdio_probe.spawn import spawn

ID = "L2"
TITLE = "lone surrogate kills the server writer and the session"
NAMES = {"bug": b"bad-\xff-name", "control": b"good-name", "mitigated": b"bad-\xff-name"}
VALID_AFTER = "valid-after-bad"
_EXCEPTION = re.compile(r"^[ |+]*([A-Za-z_][\w.]*(?:Error|Exception|ExceptionGroup)):", re.M)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """One request; the response carries the arm's name; a valid notification follows; then EOF."""
    args = ["--name-hex", NAMES[arm].hex(), "--then-notify", VALID_AFTER]
    if arm == "mitigated":
        args.append("--sanitize")
    child = spawn(sdk.python, "fixture_stdio_writer.py", args, sdk.env)
    try:
        reader = wire.StdoutReader(child)
        wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        wire.close_stdin(child)  # the fixture answers request 1 in full before it reads EOF
        exited = child.wait_self_exit(options.window)
        if not exited:
            child.stop()
        reader.join(1.0)
    finally:
        child.stop()
    record = child.record()
    return {
        "name_hex": NAMES[arm].hex(),
        "exited_by_itself": exited,
        "stdout_bytes": reader.bytes,
        "messages": reader.messages,
        "response_arrived": any(m.get("id") == 1 for m in reader.messages),
        "valid_message_arrived": any(_is_valid_after(m) for m in reader.messages),
        "exceptions": _EXCEPTION.findall(record["stderr"]),
        **record,
    }


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

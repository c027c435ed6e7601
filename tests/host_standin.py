"""A stdio MCP server in the stdlib alone that logs what a host does to it: the host recipes' stand-in.

Run: python host_standin.py --log FILE. Each event is one JSON line appended to FILE at once
(a host forwards few environment variables, so the file travels in argv): "start" with its pid,
{"event": "message", "method", "id", "params"} for each line received (one that is not a JSON object: its
"raw" text, method, id and params null; a last line without its newline at EOF is dropped), "eof" at stdin EOF,
"signal" with its name, and "exit". It answers initialize (with the version the host asked for),
tools/list (one tool, probe, no arguments), tools/call of probe, and ping; any other request gets
method-not-found (so a host that tries server/discover first falls back to initialize). At stdin
EOF it exits at once, 0; SIGTERM and SIGINT end it after logging them. Its handlers are Python's, so it reads
stdin in poll(2) with its signal wakeup pipe (stdio_probe/fixtures/fixture_wakeup.py): a host's signal that lands
just before the read begins is logged at once, not after the next line (or never, once stdin is at EOF).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent / "stdio_probe" / "fixtures"))  # after the stdlib's
from fixture_wakeup import json_object, lines, wake_on_signals  # noqa: E402  (the fixtures' helper, from their folder)

TOOL = {"name": "probe", "description": "Answers 'probed'.", "inputSchema": {"type": "object", "properties": {}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    log_file = open(parser.parse_args().log, "a", buffering=1)

    def log(event: str, **fields: object) -> None:
        log_file.write(json.dumps({"t": time.monotonic(), "event": event, **fields}) + "\n")

    def on_signal(signum: int, _frame: object) -> None:
        log("signal", name=signal.Signals(signum).name)
        log("exit")
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    wake_on_signals()
    log("start", pid=os.getpid())
    for line in lines(0):
        if (message := json_object(line)) is None:  # not JSON, or a batch, a number...: logged, never answered
            log("message", method=None, id=None, params=None, raw=line[:200].decode(errors="replace"))
            continue
        method, params = message.get("method"), message.get("params") or {}
        log("message", method=method, id=message.get("id"), params=params)
        if method is None or "id" not in message:
            continue  # a notification or a response: nothing to answer
        answer: dict = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            answer["result"] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "host-standin", "version": "1"},
            }
        elif method == "tools/list":
            answer["result"] = {"tools": [TOOL]}
        elif method == "tools/call" and params.get("name") == "probe":
            answer["result"] = {"content": [{"type": "text", "text": "probed"}], "isError": False}
        elif method == "ping":
            answer["result"] = {}
        else:
            answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    log("eof")
    log("exit")
    os._exit(0)


if __name__ == "__main__":
    main()

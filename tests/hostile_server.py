"""A small hostile stdio server (stdlib only) for tests/server/test_hostile.py and bench/bench_hostile.py.

It answers initialize, ping and tools/call like a minimal MCP server, and misbehaves as its one
argument says:

  flood-empty, flood-short, flood-line, flood-binary
              write empty lines, "1" lines, one endless line, or random bytes to stdout forever
              (after answering initialize, so every check gets that far)
  non-reader  stop reading stdin after initialize (a large call to it cannot be written)
  hopper      leave a daemon that keeps forking a new pid and exiting, SIGTERM ignored
  stubborn-hopper
              hopper, and the server itself ignores SIGTERM and stays after EOF
  chatty      log 2 MB of lines on stdout before answering initialize
  asks-client answer ping only after the client answered its own sampling/createMessage request
  slack       answer a tools/call with many small unflushed-at-once writes that leave slack in the pipe
  dump-env    report what it can read of its and its ancestors' environments (env_dump.py) on stderr and
              stdout, and answer initialize with an error whose message is its parent's environment
  garbled     write GARBLE (ESC sequences, control characters, invalid UTF-8) to stdout and stderr
              before answering initialize
  deep        write a JSON-RPC notification nested deeper than a parser's recursion goes before answering
              initialize
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import env_dump

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
GARBLE = b"\x1b[31mred\x1b[0m \x01bell\x07 \xff\xfe bad utf-8\n"


def write(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def answer(request: dict, result: dict) -> None:
    write({"jsonrpc": "2.0", "id": request["id"], "result": result})


def flood() -> None:
    chunk = {
        "flood-empty": b"\n" * 65536,
        "flood-short": b"1\n" * 32768,
        "flood-line": b"x" * 65536,
    }.get(MODE)
    while True:
        os.write(1, chunk if chunk is not None else os.urandom(65536))


def hop() -> None:
    """A daemon in a new session that forks its successor and exits, over and over."""
    if os.fork():
        return
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.closerange(0, 3)
    while True:
        if os.fork():
            os._exit(0)
        time.sleep(0.05)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if MODE == "stubborn-hopper":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "dump-env":
        env_dump.report()
    if MODE == "chatty":
        for n in range(40_000):
            os.write(1, f"log line {n}: starting up, nothing to see here yet\n".encode())
    if MODE == "garbled":
        os.write(1, GARBLE)
        os.write(2, GARBLE)
    if MODE == "deep":
        os.write(1, b'{"jsonrpc": "2.0", "method": "notifications/message", "params": ' + b"[" * 100_000 + b"\n")
    for raw in sys.stdin.buffer:
        try:
            request = json.loads(raw)
        except ValueError:
            continue
        method = request.get("method")
        if method == "initialize" and MODE == "dump-env":
            message = env_dump.environ_of(os.getppid())
            write({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32603, "message": message}})
        elif method == "initialize":
            if MODE.endswith("hopper"):  # before the answer: the daemon exists once the handshake is done
                hop()
            answer(
                request,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": MODE, "version": "1"},
                },
            )
            if MODE.startswith("flood"):
                flood()
            if MODE == "non-reader":
                while True:
                    time.sleep(1)
        elif method == "ping" and MODE == "asks-client":
            write(
                {
                    "jsonrpc": "2.0",
                    "id": "s1",
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1},
                }
            )
            for line in sys.stdin.buffer:  # wait for the client's answer, ignoring everything else
                if json.loads(line).get("id") == "s1":
                    break
            answer(request, {})
        elif method == "ping":
            answer(request, {})
        elif method == "tools/call":
            text = "y" * 200_000
            if MODE == "slack":  # many small writes: the pipe's pages fill with room left in each
                body = (
                    json.dumps(
                        {"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": text}]}}
                    )
                    + "\n"
                )
                for i in range(0, len(body), 1000):
                    os.write(1, body[i : i + 1000].encode())
            else:
                answer(request, {"content": [{"type": "text", "text": text}]})
        elif "id" in request and method is not None:
            write({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}})
    while MODE == "stubborn-hopper":
        time.sleep(1)


if __name__ == "__main__":
    main()

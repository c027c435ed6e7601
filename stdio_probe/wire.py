"""The probe's side of a server's pipes: send JSON-RPC lines, read stdout when told to."""

from __future__ import annotations

import json
import os
import select
import threading
import time

from stdio_probe.spawn import Child


def send(child: Child, message: dict) -> None:
    """Write one newline-delimited JSON-RPC message to the child's stdin."""
    child.process.stdin.write((json.dumps(message) + "\n").encode())
    child.process.stdin.flush()


def close_stdin(child: Child) -> float:
    """Close the child's stdin (EOF for the server); returns when, on the monotonic clock."""
    child.process.stdin.close()
    return time.monotonic()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


def initialize(child: Child, reader: StdoutReader | None, idle_bound: float) -> bool:
    """The handshake as a client does it: initialize, its answer, notifications/initialized.

    Without a reader, the one answer line is read straight off the pipe and nothing more (the
    server writes nothing else until asked again). The wait is bounded as Child.wait_for bounds it.
    """
    send(child, INITIALIZE)
    if reader is not None:
        answered = child.wait_for(lambda: any(m.get("id") == 0 for m in reader.messages), idle_bound)
    else:
        fd, line = child.process.stdout.fileno(), bytearray()

        def one_line() -> bool:
            while not line.endswith(b"\n") and select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                line.extend(chunk)
            return line.endswith(b"\n")

        answered = child.wait_for(one_line, idle_bound)
    if answered:
        send(child, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answered


class StdoutReader:
    """Drains a child's stdout in a thread, counting bytes and keeping parsed lines."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.bytes = 0
        self.messages: list[dict] = []
        self.eof = threading.Event()
        self.changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pending = b""
        stream = self.child.process.stdout
        while chunk := stream.read1(65536):
            with self.changed:
                self.bytes += len(chunk)
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    try:
                        self.messages.append(json.loads(line))
                    except ValueError:
                        self.messages.append({"unparsed": line[:200].decode("utf-8", "replace")})
                self.changed.notify_all()
        with self.changed:
            self.eof.set()
            self.changed.notify_all()

    def wait_for(self, predicate, timeout: float) -> bool:
        """Wait until predicate(self) holds or EOF, at most timeout seconds; returns predicate(self)."""
        with self.changed:
            self.changed.wait_for(lambda: predicate(self) or self.eof.is_set(), timeout)
            return bool(predicate(self))

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

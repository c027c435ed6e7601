"""The probe's side of a server's pipes: send JSON-RPC lines, read stdout when told to."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable

from stdio_probe import eras, sample
from stdio_probe.spawn import Child


def send(child: Child, message: dict) -> None:
    """Write one newline-delimited JSON-RPC message to the child's stdin."""
    child.process.stdin.write((json.dumps(message) + "\n").encode())
    child.process.stdin.flush()


def close_stdin(child: Child) -> float:
    """Close the child's stdin (EOF for the server); returns when, on the monotonic clock."""
    child.process.stdin.close()
    return time.monotonic()


INITIALIZE = eras.opening_request(eras.LEGACY, 0)  # the cases' fixtures speak the legacy era


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
            while not line.endswith(b"\n") and sample.readable(fd, 0):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                line.extend(chunk)
            return line.endswith(b"\n")

        answered = child.wait_for(one_line, idle_bound)
    if answered:
        send(child, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answered


LINE_CAP = 65_536  # bytes of one stdout line kept (head and tail); a longer line is counted, not parsed
KEPT_CAP = 1_048_576  # bytes of stdout lines kept in all; beyond, lines are counted and only answers' ids kept
IDS_CAP = 1000
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,64}")\s*[,}]')


class StdoutReader:
    """Reads a server's stdout lines in a thread, within bounds however much the server writes.

    A line is kept whole up to LINE_CAP bytes, else as its head and tail (the answer's id is found
    in either); kept lines stop at KEPT_CAP bytes, after which lines are only counted, answers'
    ids still noted (up to IDS_CAP). messages are the kept JSON-RPC messages, and any other line as
    {"unparsed": its text, shortened}; the first line that is not a JSON-RPC message (a banner, a log
    line, an empty line) is also kept as offending. pause() stops reading for good, leaving stdout
    unread from then on. One reader for the cases' fixtures and the checks' servers alike.
    """

    def __init__(self, child: Child) -> None:
        self.fd = child.process.stdout.fileno()
        self.bytes = 0
        self.lines = 0
        self.messages: list[dict] = []
        self.ids: set = set()
        self.offending: dict | None = None  # {"line": number, "text": bounded, "bytes": length}
        self.eof = threading.Event()
        self._kept = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        head, tail, length = bytearray(), bytearray(), 0
        while not self._stop.is_set():
            if not sample.readable(self.fd, 0.02):
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.bytes += len(chunk)
            *ends, rest = chunk.split(b"\n")
            for piece in ends:
                head, tail, length = _extend(head, tail, length, piece)
                self._line(bytes(head), bytes(tail), length)
                head, tail, length = bytearray(), bytearray(), 0
            head, tail, length = _extend(head, tail, length, rest)
        if length and not self._stop.is_set():  # a last line with no newline
            self._line(bytes(head), bytes(tail), length)
        self.eof.set()

    def _line(self, head: bytes, tail: bytes, length: int) -> None:
        self.lines += 1
        whole = head if length <= LINE_CAP else None
        message = _parse(whole.rstrip(b"\r")) if whole is not None else _oversize(head, tail.rstrip(b"\r"), length)
        if message is None:
            if self.offending is None:
                self.offending = {"line": self.lines, "text": shorten_bytes(head), "bytes": length}
            message = {"unparsed": shorten_bytes(head)}
        elif "id" in message and "method" not in message and len(self.ids) < IDS_CAP:
            self.ids.add(message["id"] if isinstance(message["id"], int | str) else None)
        if self._kept + min(length, LINE_CAP) <= KEPT_CAP:
            self._kept += min(length, LINE_CAP)
            self.messages.append(message)

    def wait_for(self, predicate: Callable[[StdoutReader], bool], timeout: float) -> bool:
        """Wait until predicate(self) holds or stdout ends, at most timeout seconds; returns predicate(self)."""
        deadline = time.monotonic() + timeout
        while not predicate(self) and not self.eof.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        return bool(predicate(self))

    def pause(self) -> None:
        """Stop reading (within 0.1 s): what the server writes from now on stays in the pipe."""
        self._stop.set()
        self._thread.join(1.0)

    @property
    def paused(self) -> bool:
        return self._stop.is_set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def _extend(head: bytearray, tail: bytearray, length: int, piece: bytes) -> tuple[bytearray, bytearray, int]:
    """A line's head (its first LINE_CAP bytes) and tail (its last LINE_CAP // 2), grown by piece."""
    room = LINE_CAP - len(head)
    head += piece[:room]
    tail += piece
    del tail[: -(LINE_CAP // 2)]
    return head, tail, length + len(piece)


def _parse(line: bytes) -> dict | None:
    """A JSON-RPC 2.0 message, or None for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None


def _oversize(head: bytes, tail: bytes, length: int) -> dict | None:
    """An over-long line, judged from its ends: an object naming JSON-RPC 2.0, its id where one end shows it."""
    if not (head.startswith(b"{") and tail.endswith(b"}") and re.search(rb'"jsonrpc"\s*:\s*"2.0"', head + tail)):
        return None
    found = _ID.search(head[:200]) or _ID.search(tail[-200:])
    message: dict = {"jsonrpc": "2.0", "oversize_bytes": length}
    if found:
        message["id"] = json.loads(found.group(1))
    return message


def shorten_bytes(data: bytes, limit: int = 200) -> str:
    """Bytes of a line as text, replacing what is not UTF-8, cut to limit characters."""
    text = data[: limit * 4].decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""The probe's side of a server's pipes: send JSON-RPC lines, read stdout when told to."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress

from stdio_probe.core import eras, sample, spawn
from stdio_probe.core.spawn import Child

SEND_BOUND = 10.0  # seconds a write to a server may make no progress before the arm gives up on it


class WriteBlocked(OSError):
    """The server stopped reading its stdin: a write made no progress within its bound."""


def write_bounded(child: Child, data: bytes) -> None:
    """Write data to the child's stdin without ever blocking a thread for SEND_BOUND s without progress.

    The pipe is made non-blocking and written as it drains; a server that stops reading (or a run that
    is stopping, spawn.stopping()) raises WriteBlocked, so the arm fails with a reason instead of hanging.
    A server that closed its stdin (it exited, or died at start) gets nothing more: the rest is dropped,
    as a host's write would fail, and the caller observes the exit (no evidence, never an arm's error).
    """
    fd = child.process.stdin.fileno()
    os.set_blocking(fd, False)
    view, last_progress = memoryview(data), time.monotonic()
    while view:
        if spawn.stopping():
            raise WriteBlocked("the run is stopping")
        if time.monotonic() - last_progress > SEND_BOUND:
            raise WriteBlocked(
                f"the server read none of its stdin for {SEND_BOUND:g} s "
                f"({len(data) - len(view)} of {len(data)} bytes written)"
            )
        if not sample.writable(fd, 0.05):
            continue
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        except BrokenPipeError:
            return
        view, last_progress = view[written:], time.monotonic()


def send(child: Child, message: dict | bytes, reader: StdoutReader | None = None) -> None:
    """Write one newline-delimited JSON-RPC message (or a raw line) to the child's stdin, bounded (write_bounded).

    With a reader, a request's id is registered first (StdoutReader.expect), so its answer is kept
    however much else the server writes.
    """
    if isinstance(message, dict):
        if reader is not None and "method" in message and "id" in message:
            reader.expect(message["id"])
        message = (json.dumps(message) + "\n").encode()
    write_bounded(child, message)


def close_stdin(child: Child) -> float:
    """Close the child's stdin (EOF for the server); returns when, on the monotonic clock: read before the close,
    since the server can see EOF (and start what is timed from it) before this thread runs again."""
    at = time.monotonic()
    with suppress(OSError):
        child.process.stdin.close()
    return at


INITIALIZE = eras.opening_request(eras.LEGACY, 0)  # the cases' fixtures speak the legacy era


def initialize(child: Child, reader: StdoutReader | None, idle_bound: float) -> bool:
    """The handshake as a client does it: initialize, its answer, notifications/initialized.

    Without a reader, the one answer line is read straight off the pipe and nothing more (the
    server writes nothing else until asked again), and only its last chunk is kept: whether it ended is
    all that is read of it, and a line without end costs one chunk. The wait is bounded as
    StdoutReader.wait_answer (or, without a reader, Child.wait_for) bounds it.
    """
    send(child, INITIALIZE, reader)
    if reader is not None:
        answered = reader.wait_answer(0, idle_bound)
    else:
        fd, last = child.process.stdout.fileno(), [b""]

        def one_line() -> bool:
            while not last[0].endswith(b"\n") and sample.readable(fd, 0):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                last[0] = chunk
            return last[0].endswith(b"\n")

        answered = child.wait_for(one_line, idle_bound)
    if answered:
        send(child, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answered


LINE_CAP = 65_536  # bytes of one stdout line kept (head and tail); a longer line is counted, not parsed
KEPT_CAP = 1_048_576  # bytes of stdout lines kept in all; beyond, lines are only counted
LINE_FRAMING = 256  # what one kept line costs besides its bytes (its newline, its dict): an empty line is not free
KEPT_LINES = 2000  # lines kept in all, however short
WANTED_CAP = 64  # answers to the probe's own requests kept whole, whatever else was written
REQUESTS_CAP = 10  # the server's own requests to the client noted
PAUSE_BOUND = 10.0  # seconds pause() waits for the reading thread to end
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,64}")\s*[,}]')


class StdoutReader:
    """Reads a server's stdout lines in a thread, within bounds however much the server writes.

    A line is kept whole up to LINE_CAP bytes, else as its head and tail (the answer's id is found
    in either); kept lines stop at KEPT_CAP bytes or KEPT_LINES lines, each costing at least
    LINE_FRAMING, after which lines are only counted. Answers to the probe's own requests (expect(id),
    which wire.send calls) are kept apart in answers, found by id however much else the server wrote.
    messages are the kept JSON-RPC messages, and
    any other line as {"unparsed": its text, shortened}; the first line that is not a JSON-RPC message
    (a banner, a log line, an empty line, a line too long to parse) is also kept as offending; the
    server's own requests to the client are noted in requests. pause() stops reading for good, leaving
    stdout unread from then on. One reader for the cases' fixtures and the checks' servers alike.

    judge (S4), given every parsed message in order, returns why it is not allowed or None; the first
    message it refuses is kept as offending too, with its why. line_cap raises LINE_CAP for a reader
    that must parse a large answer whole to judge it.
    """

    def __init__(
        self, child: Child, judge: Callable[[dict], str | None] | None = None, line_cap: int = LINE_CAP
    ) -> None:
        self.child = child
        self.judge = judge
        self.line_cap = line_cap
        child.readers.append(self)
        self.fd = child.process.stdout.fileno()
        self.bytes = 0
        self.lines = 0
        self.messages: list[dict] = []
        self.answers: dict = {}  # id of a request the probe sent -> its answer
        self.requests: list[dict] = []  # the server's requests to the client: {"id", "method", "line"}
        self.offending: dict | None = None  # {"line": number, "text": bounded, "bytes": length}
        self.eof = threading.Event()
        self._wanted: set = set()
        self._kept = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def expect(self, request_id: object) -> None:
        """Keep the answer to request_id whole when it comes (before the request is sent: it may come at once)."""
        if len(self._wanted) < WANTED_CAP and isinstance(request_id, int | str):
            self._wanted.add(request_id)

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
                head, tail, length = _extend(head, tail, length, piece, self.line_cap)
                self._line(bytes(head), bytes(tail), length)
                head, tail, length = bytearray(), bytearray(), 0
            head, tail, length = _extend(head, tail, length, rest, self.line_cap)
        if length and not self._stop.is_set():  # a last line with no newline
            self._line(bytes(head), bytes(tail), length)
        self.eof.set()

    def _line(self, head: bytes, tail: bytes, length: int) -> None:
        self.lines += 1
        cost = min(length, self.line_cap) + LINE_FRAMING  # what keeping it holds: S4 parses lines up to 8 MiB
        room = len(self.messages) < KEPT_LINES and self._kept + cost <= KEPT_CAP
        if not length and not room and self.offending is not None:
            return  # an empty line once nothing more is kept: counted only (a flood of them stays cheap)
        oversize = length > self.line_cap
        why = None
        try:
            message = _oversize(head, tail.rstrip(b"\r"), length) if oversize else _parse(head.rstrip(b"\r"))
            if message is not None and not oversize and self.judge is not None:
                why = self.judge(message)
        except RecursionError:  # nested near the recursion limit: the parser and the judge recurse per level
            message, why = None, f"nested deeper than about {sys.getrecursionlimit()} levels, not parsed"
        if (message is None or oversize or why is not None) and self.offending is None:
            self.offending = {"line": self.lines, "text": shorten_bytes(head), "bytes": length}
            if oversize:
                self.offending["unparsed"] = f"longer than {self.line_cap} bytes: not parsed"
            if why is not None:
                self.offending["why"] = why
        if message is None:
            message = {"unparsed": shorten_bytes(head)}
        elif "id" in message and "method" not in message:
            self._answer(message)
        elif "id" in message and len(self.requests) < REQUESTS_CAP:
            self.requests.append({"id": message["id"], "method": str(message["method"])[:100], "line": self.lines})
        if room:
            self._kept += cost
            self.messages.append(message)

    def _answer(self, message: dict) -> None:
        request_id = message["id"] if isinstance(message["id"], int | str) else None
        if request_id in self._wanted and request_id not in self.answers:
            self.answers[request_id] = message

    def wait_answer(self, request_id: object, idle_bound: float) -> bool:
        """Whether the answer to request_id (expected) came, waiting while the server makes progress (its tree's
        CPU, bytes on its pipes: a server blocked on a slow reader is not idle); bounded as
        spawn.wait_progressing bounds it, and over when stdout ends or the server exits."""
        answered = lambda r: request_id in r.answers or r.child.process.poll() is not None  # noqa: E731
        return self.wait_progressing(answered, idle_bound) and request_id in self.answers

    def wait_progressing(self, predicate: Callable[[StdoutReader], bool], idle_bound: float) -> bool:
        """Wait until predicate(self) holds or stdout ends, within a window of no progress of the server
        (Child.clock: its tree's CPU, bytes on its pipes; spawn.wait_progressing); returns predicate(self)."""

        def look(check: float) -> bool:
            if predicate(self) or self.eof.is_set():
                return True
            time.sleep(check)
            return False

        spawn.wait_progressing(look, self.child.clock(), idle_bound, 0.01)
        return bool(predicate(self))

    def wait_for(self, predicate: Callable[[StdoutReader], bool], timeout: float) -> bool:
        """Wait until predicate(self) holds or stdout ends, at most timeout seconds; returns predicate(self).
        A fixed delay, not a window: a window is wait_progressing."""
        deadline = time.monotonic() + timeout
        while not predicate(self) and not self.eof.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        return bool(predicate(self))

    def pause(self) -> bool:
        """Stop reading: what the server writes from now on stays in the pipe. Whether the reading thread
        has ended (it polls every 0.02 s; PAUSE_BOUND allows for a loaded machine): until it has, it may
        still read what the server writes next."""
        self._stop.set()
        self._thread.join(PAUSE_BOUND)
        return not self._thread.is_alive()

    @property
    def paused(self) -> bool:
        return self._stop.is_set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def _extend(
    head: bytearray, tail: bytearray, length: int, piece: bytes, cap: int = LINE_CAP
) -> tuple[bytearray, bytearray, int]:
    """A line's head (its first cap bytes) and tail (its last LINE_CAP // 2), grown by piece."""
    room = cap - len(head)
    head += piece[:room]
    tail += piece
    del tail[: -(LINE_CAP // 2)]
    return head, tail, length + len(piece)


def _parse(line: bytes) -> dict | None:
    """A JSON-RPC 2.0 message, or None for anything else; RecursionError for JSON nested too deep to parse."""
    if line.lstrip()[:1] != b"{":  # a log line, an empty line: no exception raised for each of a flood
        return None
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

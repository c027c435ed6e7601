"""Reads from a child's pipe that fail with a message after a bound, instead of hanging the test run.

A test that waits for a line a child never writes (a race lost, a child stuck) must fail, and say what
it waited for. A line is read from the file descriptor a byte at a time, so nothing past it is left in a
buffered reader that a later read of the same stream would miss.
"""

from __future__ import annotations

import os
import select
import time
from typing import BinaryIO

BOUND = 30.0  # seconds: far above what a child takes to write a line on a loaded machine


def read_line(stream: BinaryIO, bound: float = BOUND) -> bytes:
    """One line (with its newline, or what came before EOF), or AssertionError after bound seconds."""
    return _read(stream, bound, until_newline=True)


def read_to_eof(stream: BinaryIO, bound: float = BOUND) -> bytes:
    """All that is written until EOF, or AssertionError after bound seconds."""
    return _read(stream, bound, until_newline=False)


def _read(stream: BinaryIO, bound: float, until_newline: bool) -> bytes:
    fd, data = stream.fileno(), b""
    deadline = time.monotonic() + bound
    while not (until_newline and data.endswith(b"\n")):
        left = deadline - time.monotonic()
        wanted = "a line" if until_newline else "EOF"
        assert left > 0 and select.select([fd], [], [], left)[0], f"no {wanted} within {bound:g} s; read {data!r}"
        chunk = os.read(fd, 1 if until_newline else 65536)
        if not chunk:
            break
        data += chunk
    return data

"""Spawn fixture processes and reap every one of them, whatever happens.

Each spawned tree gets its own session and the run marker in its environment.
The SDK's stdio_client puts its own children in new sessions too, so killing a
process group is not enough: reaping finds the run's processes by marker in
/proc, re-parented ones included (the psutil tests' reap_children, by marker).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from stdio_probe import sample

MARKER = "PROBE_RUN_ID"
RUN_ID = os.environ.get(MARKER) or uuid.uuid4().hex  # a supervisor may choose it, to find our tree
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
STDERR_LIMIT = 4000
TERM_GRACE = 2.0

_live: set[subprocess.Popen] = set()
_live_lock = threading.Lock()


@dataclass
class Child:
    """A spawned fixture: its process, start time, and stderr kept in a file (never a pipe that can fill)."""

    popen: subprocess.Popen
    started: float
    stderr_file: object = field(repr=False)
    ended_by: str | None = None  # the signal we sent that ended it; None while it ended by itself

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stderr_text(self) -> str:
        self.stderr_file.seek(0)
        text = self.stderr_file.read().decode("utf-8", "replace")
        return text if len(text) <= STDERR_LIMIT else "…" + text[-STDERR_LIMIT:]

    def wait_self_exit(self, timeout: float) -> bool:
        """Whether the process exited by itself within timeout."""
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM to its group, then SIGKILL after a bound; records which one ended it."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.popen.poll() is not None:
                return
            with suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            with suppress(subprocess.TimeoutExpired):
                self.popen.wait(TERM_GRACE)
                self.ended_by = sig.name

    def record(self) -> dict:
        """The raw exit facts of this child."""
        code = self.popen.returncode
        return {
            "pid": self.pid,
            "exit_code": code,
            "signal": signal.Signals(-code).name if code is not None and code < 0 else None,
            "ended_by": self.ended_by or ("self" if code is not None else None),
            "stderr": self.stderr_text(),
        }


def spawn(python: str, script: str, args: list[str], env: dict[str, str], pass_fds: tuple[int, ...] = ()) -> Child:
    """Start a fixture script under python, in its own session, tagged with the run marker."""
    stderr_file = tempfile.TemporaryFile()
    popen = subprocess.Popen(
        [python, str(FIXTURES / script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        env={**os.environ, **env, MARKER: RUN_ID},
        start_new_session=True,
        pass_fds=pass_fds,
    )
    with _live_lock:
        _live.add(popen)
    return Child(popen, time.monotonic(), stderr_file)


def run_processes() -> list[dict]:
    """The live (non-zombie) processes carrying this run's marker, the probe itself excepted."""
    return [p for p in sample.marked_processes(MARKER, RUN_ID) if p["pid"] != os.getpid()]


def reap_all() -> int:
    """Kill every process of this run, by marker and by what we spawned; returns how many were alive."""
    with _live_lock:
        spawned = list(_live)
        _live.clear()
    survivors = {p["pid"] for p in run_processes()} | {p.pid for p in spawned if p.poll() is None}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in survivors:
            with suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + TERM_GRACE
        while time.monotonic() < deadline and _alive(survivors):
            for popen in spawned:
                popen.poll()
            time.sleep(0.02)
        if not _alive(survivors):
            break
    for popen in spawned:
        with suppress(subprocess.TimeoutExpired):
            popen.wait(TERM_GRACE)
    return len(survivors)


def _alive(pids: set[int]) -> bool:
    return any(sample.is_live(pid) for pid in pids)

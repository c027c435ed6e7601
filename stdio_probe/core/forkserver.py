"""The probe's side of fixtures/fork_server.py: one warm interpreter per SDK, each fixture forked from it.

A fixture started this way is a real process of the SDK's interpreter, with
its own pipes, session and stderr file, as an exec'd one has; only its
start-up differs (the SDK is already imported), so the fast method uses it and
the window method, the article's reference, does not.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from stdio_probe.core import sample
from stdio_probe.core.host_contract import Pidfd

# What the fixtures import, so that a fork starts with it done: the SDK (its high-level server: 2.x's
# mcp imports MCPServer, 1.x's FastMCP is imported here), what anyio imports on first use (its
# backend in anyio.run, its subprocess support in open_process), and the fixtures' own helper modules
# (beside fork_server.py, so on its sys.path).
PRELOAD = (
    "mcp",
    "mcp.server.fastmcp",
    "mcp.client.stdio",
    "mcp.client.session_group",
    "mcp.server.stdio",
    "mcp.shared.message",
    "anyio._backends._asyncio",
    "anyio._core._subprocesses",
    "contract",
    "sdk_config",
    "fixture_events",
    "timer_query",
    "driver_common",
)
SPAWN_MARKER = "PROBE_SPAWN_ID"  # one spawned fixture's tree (spawn), forked ones too: the proofs' hang.Marker
SHIM_SOCKET_ENV = "PROBE_FORK_SOCKET"  # fixtures/fork_shim.py's: set for every forked fixture, so a driver finds it
STALL_BOUND = 2.0  # seconds asleep (neither running nor waiting for a CPU) without a child: stuck (in its preload)
START_CAP = 60.0  # the longest a fork may wait for its pid, progress or not
POLL_INTERVAL = 0.1


class ForkServerError(Exception):
    """The fork server lost a child's exit status (it died): the arm that needed it is an error."""


class ForkServerUnavailable(Exception):
    """The fork server died or stalled before forking: spawn execs the fixture instead."""


class ForkedProcess:
    """A forked fixture, with the part of subprocess.Popen's interface the probe uses; signals go through pidfd.

    Its exit status comes from the fork server, its parent, over a status socket;
    a wait holds the lock for one short poll at a time, so other threads can poll.
    """

    def __init__(self, args: list[str], pid: int, pidfd: Pidfd | None, status: socket.socket, stdin, stdout) -> None:
        self.args = args
        self.pid = pid
        self.pidfd = pidfd  # None: it was gone before the probe could hold it
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._status: socket.socket | None = status
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        return self._read_status(0.0)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_INTERVAL if deadline is None else min(POLL_INTERVAL, max(0.0, deadline - time.monotonic()))
            if (code := self._read_status(left)) is not None:
                return code
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)

    def release(self) -> None:
        """Close the status socket (its arm is over); a status not yet read is then looked for in /proc."""
        with self._lock:
            if self._status is not None:
                if self.returncode is None and sample.readable(self._status, 0) and (data := self._status.recv(4096)):
                    self.returncode = json.loads(data)["returncode"]
                self._status.close()
                self._status = None

    def _read_status(self, timeout: float) -> int | None:
        """The return code once reported; None while running. With the fork server gone, the
        process is followed in /proc, and its end raises ForkServerError (its status is lost)."""
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            if self._status is None:  # the fork server is gone
                if sample.is_live(self.pid):
                    time.sleep(timeout)
                    return None
                raise ForkServerError(f"pid {self.pid} ended after its fork server, which had its exit status")
            if sample.readable(self._status, timeout):
                data = self._status.recv(4096)
                self._status.close()
                self._status = None
                if data:
                    self.returncode = json.loads(data)["returncode"]
            return self.returncode


class ForkServer:
    """fixtures/fork_server.py running under one SDK's interpreter and environment.

    Its preload imports more than any one fixture does, so a preload that
    crashes or hangs says nothing about a fixture: the server is then given up
    (unavailable) and the fixtures are exec'd, to show what they do themselves.
    """

    def __init__(self, command: list[str], script: Path, env: dict[str, str], folder: str) -> None:
        """command starts the SDK's interpreter (spawn.from_a_shell: with the signal dispositions a shell gives
        it, which the preload, and so every fork, starts from)."""
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._stderr = tempfile.TemporaryFile()
        # where fixtures/fork_shim.py reaches it (a folder only we can enter, in the run's folder); every fork
        # inherits the address
        self._folder = tempfile.TemporaryDirectory(prefix="probe-fork-", dir=folder)
        self.shim_socket = listen = str(Path(self._folder.name) / "fork.sock")
        # Its stdin and stdout are pipes and its stderr a file, as every fixture's are: the objects that
        # wrap fds 0-2 are built at start-up and keep what they learnt then (seekable, isatty), and each
        # child inherits them.
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        self.process = subprocess.Popen(
            [*command, str(script), "--control-fd", str(theirs.fileno()), "--preload", ",".join(PRELOAD)]
            + ["--listen", listen],
            stdin=stdin_r,
            stdout=stdout_w,
            stderr=self._stderr,
            env={**env, SHIM_SOCKET_ENV: listen},
            start_new_session=True,
            pass_fds=(theirs.fileno(),),
        )
        self._pidfd = Pidfd.open(self.process.pid)  # our child, not waited for: its pid is its own
        for fd in (stdin_r, stdin_w, stdout_r, stdout_w):
            os.close(fd)
        theirs.close()
        self._send_lock = threading.Lock()
        self.unavailable: str | None = None  # why the server was given up

    def fork(
        self, script: Path, args: list[str], stderr_fd: int, pass_fds: tuple[int, ...], spawn_id: str
    ) -> ForkedProcess:
        """Fork script with these args; pass_fds arrive at the same numbers, as with subprocess. The child's
        environment, /proc/PID/environ included, carries spawn_id as the spawn marker's value."""
        if self.unavailable:
            raise ForkServerUnavailable(self.unavailable)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        status, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {"script": str(script), "args": args, "fds": list(pass_fds), "spawn_id": spawn_id}
        fds = [stdin_r, stdout_w, stderr_fd, theirs.fileno(), *pass_fds]
        try:
            with self._send_lock:
                socket.send_fds(self._control, [json.dumps(request).encode()], fds)
            pid = self._await_pid(status)
        except (OSError, ForkServerUnavailable) as exc:
            why = self._give_up(str(exc) if isinstance(exc, ForkServerUnavailable) else f"fork server failed: {exc}")
            # a pid that arrived as the server was given up belongs to a child no arm will watch
            if sample.readable(status, 0) and (data := status.recv(4096)):
                _kill_orphan(json.loads(data)["pid"], spawn_id)
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            status.close()
            raise ForkServerUnavailable(why) from None
        finally:
            for fd in (stdin_r, stdout_w):
                os.close(fd)
            theirs.close()
        # held while the fork server, our child and so still the one with its pid, is its parent
        pidfd = Pidfd.open(pid, lambda child: sample.parent_pid(child) == self.process.pid and self._alive())
        return ForkedProcess([str(script), *args], pid, pidfd, status, open(stdin_w, "wb"), open(stdout_r, "rb"))

    def _alive(self) -> bool:
        """Whether the fork server is not reaped yet (its pid is still its own)."""
        return self._pidfd is not None and self._pidfd.signal(0)

    def _await_pid(self, status: socket.socket) -> int:
        """The forked child's pid; unavailable if the server dies, stalls, or passes START_CAP.

        A stall is STALL_BOUND seconds in which the server neither ran (sample.scheduled_ns) nor was runnable
        (state R, queued for a CPU: a wait schedstat adds only as it ends): asleep in its preload (a lock, a read
        that never ends). A server runnable but starved by the load is not stalled: CPU ticks alone gave a server
        up at a load of 30 on 2 cores (no child from the fork server: exit None), and every later fixture of its
        SDK was exec'd."""
        started = progressed = time.monotonic()
        scheduled = sample.scheduled_ns(self.process.pid)
        while time.monotonic() - progressed < STALL_BOUND and time.monotonic() - started < START_CAP:
            if sample.readable(status, POLL_INTERVAL):
                if data := status.recv(4096):
                    return json.loads(data)["pid"]
                break
            if self.process.poll() is not None or self.unavailable:
                break
            if (now := sample.scheduled_ns(self.process.pid)) > scheduled or sample.proc_state(self.process.pid) == "R":
                scheduled, progressed = now, time.monotonic()
        raise ForkServerUnavailable(self.unavailable or f"no child from the fork server: {self.stderr_tail()}")

    def _give_up(self, why: str) -> str:
        """Mark the server unavailable and stop it; its fixtures are exec'd from now on."""
        with self._send_lock:
            if not self.unavailable:
                self.unavailable = why
                self._kill()
                self.process.wait()
        return self.unavailable

    def stderr_tail(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return text[-300:] or f"exit {self.process.poll()}"

    def close(self, bound: float) -> None:
        """Stop serving; it exits once its children are reported, or is killed after bound."""
        self._control.close()
        try:
            self.process.wait(bound)
        except subprocess.TimeoutExpired:
            self._kill()
            self.process.wait()
        if self._pidfd is not None:
            self._pidfd.close()
        self._stderr.close()
        self._folder.cleanup()

    def _kill(self) -> None:
        if self._pidfd is not None:
            self._pidfd.signal(signal.SIGKILL)


def _kill_orphan(pid: int, spawn_id: str) -> None:
    """Kill a forked child's process group and wait (bounded) until it is gone. Its parent is gone, so it is
    held only once it carries its spawn marker (one not marked yet is left to the run's reaping, by marker)."""
    pidfd = Pidfd.open(pid, lambda orphan: sample.carries(orphan, SPAWN_MARKER, spawn_id))
    if pidfd is None:
        return
    pidfd.signal_group(signal.SIGKILL)
    deadline = time.monotonic() + START_CAP
    while not pidfd.exited() and time.monotonic() < deadline:
        time.sleep(0.01)
    pidfd.close()

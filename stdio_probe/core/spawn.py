"""Spawn fixture processes and reap every one of them, whatever happens.

Each spawned tree gets its own session and the run marker in its environment, and of the
probe's environment only what a host would give it (child_env): a server we did not write
must not read the probe's secrets.
The SDK's stdio_client puts its own children in new sessions too, so killing a
process group is not enough: reaping finds the run's processes by marker in
/proc, re-parented ones included (the psutil tests' reap_children, by marker).

Every signal goes through a pidfd (host_contract.Pidfd) opened while the process was known ours: at spawn
for what we start, after its marker was read for what is found in /proc. A pid or a group number is never
signalled as a number: the process that had it may have been reaped, and the number handed to a stranger.

One owner of a run's processes, as pytest-xdist's NodeManager owns its nodes: a Supervisor holds what the
run started (each with its pidfd), the lock held across each Popen (forks_settled), the fork servers, the
stopping flag, the run's folder, the arm scopes, the orphans the process adopted and the pipes it drains
(the proof's wake sources); no module global holds any of it. The runner holds one
for a run: created at the run's start and ended with it (its own, or the caller's when the caller reads at
the end how many processes outlived their arms, as the command line does). After its stop() that
supervisor spawns nothing more; the next run's is a new one, so a process can run again after a stop.

Passed, where a caller has it: the runner gets it (or makes it) and hands it to ForkServers and to each arm's
arm_scope; a Child carries the one that started it (close() untracks it there, S8 waits on its forks).
Reached through one accessor, current(), by the code of an arm: the supervisor whose arm_scope the thread is
in (the runner enters one around each arm, on the arm's worker thread; the tests' conftest, around each
test); stopping() asks it, and is False outside any arm scope. Passing it there would add a parameter to
every probe's run_arm (forty modules), to each harness between them and a spawn or a wait
(server/session.py, host/session.py, driver.py, fixture_arm.py, fixture_log.py, observe.py, wire.py) and
to every test and pytest fixture that starts a server or a fixture itself.

The process's children are one set, whoever started them (the kernel keeps one list of children, one
subreaper flag, one fd table per process): every supervisor of the process shares the Popen lock, the orphans
the process adopted and the pipes it drains (_CHILDREN, the one module-level object: the process's, not a
run's), so none takes another's child for an orphan, and S8's close waits for every fork in flight. Runs
that overlap in one process (a test's run inside the test's own; runs on threads side by side) all carry the
process's marker: a supervisor that ends while another is live reaps only what it started and their trees;
the last one to end also reaps by marker and the orphans adopted.

Process-level, not a run's: the run marker's value (RUN_ID, fixed at import; every run of the process
carries it, so the process runs one run at a time), the guardian (_guard), which must outlive every run
of the process to reap after a SIGKILL that no object of the process survives, and the child subreaper
(adoption_refused: a one-time prctl, a property of the process the kernel keeps). Each supervisor's folder
is made inside the guardian's, so the guardian removes it whatever ends the process.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal

from stdio_probe import package_file
from stdio_probe.cli import start
from stdio_probe.core import sample
from stdio_probe.core.forkserver import SPAWN_MARKER, ForkedProcess, ForkServer, ForkServerError, ForkServerUnavailable
from stdio_probe.core.host_contract import Pidfd, Shutdown, shutdown_child
from stdio_probe.core.progress import Clock, tree

MARKER = "PROBE_RUN_ID"
SERVER_MARKER = "PROBE_SERVER_ID"  # one started server's tree (spawn_command), inside the run's
SCENARIO_MARKER = "PROBE_SCENARIO_ID"  # the host checks' scenario server's tree (host/session.py)
MARKERS = (MARKER, SERVER_MARKER, SPAWN_MARKER, SCENARIO_MARKER)  # the probe's alone to set
SPAWN_PLACEHOLDER = "0" * 32  # a fork server's value, which each fork overwrites in place with its own


def _run_id(given: str | None) -> str:
    """The run marker's value: fresh, under the supervisor's value when one is given (GIVEN/uuid).

    A supervisor may set PROBE_RUN_ID to find the probe's tree (every process in it carries
    GIVEN/...), but the value is the probe's own: the supervisor, its other children, or another
    probe given the same value carry GIVEN alone, so no reap by marker can reach them.
    """
    return f"{given}/{uuid.uuid4().hex}" if given else uuid.uuid4().hex


RUN_ID = _run_id(os.environ.get(MARKER))
FIXTURES = package_file("fixtures")
STDERR_LIMIT = 4000
TERM_GRACE = 2.0
# what the Python SDK's stdio_client passes of the host's environment (get_default_environment)
HOST_DEFAULT_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
STOP_GRACE = 0.2  # a run cut short (stop): seconds between SIGTERM and SIGKILL, so it ends within 2 s
KILL_BOUND = 2.0  # seconds of SIGKILL rounds (rescan, kill what is found) before reaping gives up
SCAN_INTERVAL = 0.02
QUIET_SCANS = 3  # quiet scans in a row before reaping is done (kill_rounds; one can miss a hop)
# a started server's own folders (Sandbox): each variable's folder, inside the sandbox's; its working folder
SANDBOX_FOLDERS = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "config",
    "XDG_DATA_HOME": "data",
    "XDG_CACHE_HOME": "cache",
    "XDG_STATE_HOME": "state",
    "XDG_RUNTIME_DIR": "runtime",
    "TMPDIR": "tmp",
}
SANDBOX_WORK = "work"

# all the guardian gets of the probe's environment: what finds its interpreter and the probe's code (PYTHONPATH,
# set by _guard), none of the probe's secrets
GUARDIAN_ENV = ("PATH", "PYTHONHOME")
# The process's guardian (guardian.py, _guard), process-level state (with adoption_refused): started once, before the
# process's first child, and kept for as long as the process lives (see the module's docstring)
_guardian: list[subprocess.Popen] = []  # the guardian, once started
_guardian_fd: list[int] = []  # the write end of its pipe, open for as long as this process lives
_guardian_folder: list[str] = []  # the folder it removes once this process has ended, made with it
_guardian_lock = threading.Lock()
_current = threading.local()  # the supervisor whose arm_scope this thread is in (current())


class Stopping(Exception):
    """The run is being cut short (Supervisor.stop()): nothing more is spawned."""


def current() -> Supervisor:
    """The supervisor of the arm running in this thread (Supervisor.arm_scope): how an arm's code reaches its run.

    RuntimeError outside any arm scope: a spawn there would belong to no run, and nothing would reap it."""
    supervisor = getattr(_current, "supervisor", None)
    if supervisor is None:
        raise RuntimeError("no run in this thread: spawn only inside a Supervisor's arm_scope()")
    return supervisor


def stopping() -> bool:
    """Whether the run of the arm in this thread is being cut short: waits end early, writes give up. False
    outside any arm scope (a wait there belongs to no run, which nothing can cut short)."""
    supervisor = getattr(_current, "supervisor", None)
    return supervisor is not None and supervisor.stopping()


def wait_progressing(ready: Callable[[float], bool], clock: Clock, idle_bound: float, check: float) -> bool:
    """Wait until ready(check) (which waits at most check s) says so, while the subject makes progress.

    The bound is a window of clock (progress.Clock.over): it counts only time in which the subject made no
    progress, so a busy machine slows start-up but cannot turn it into a hang, while a process stuck in a
    sleep or a wait is called out after idle_bound; the wait ends anyway OUTER_WINDOWS bounds after it began,
    and when the run is stopping.
    """
    return wait_progressing_ends(ready, clock, idle_bound, check) == "ready"


def wait_progressing_ends(
    ready: Callable[[float], bool], clock: Clock, idle_bound: float, check: float
) -> Literal["ready", "idle", "busy", "stopping"]:
    """wait_progressing, saying how the wait ended: ready, the window of no progress over (idle), the outer bound
    reached with progress throughout (busy), or the run stopping; read when it ends, never guessed after."""
    started = time.monotonic()
    while True:
        if stopping():
            return "stopping"
        if (over := clock.over(started, idle_bound)) is not None:
            return over
        if ready(check):
            return "ready"


@dataclass
class Child:
    """A spawned fixture: its process, start time, and stderr kept in a file (never a pipe that can fill)."""

    process: subprocess.Popen | ForkedProcess
    started: float
    stderr_file: object = field(repr=False)
    supervisor: Supervisor = field(repr=False)  # the run's owner, which tracks it until it is reaped
    ended_by: str | None = None  # the signal we sent that ended it; None while it ended by itself
    fork_server_unavailable: str | None = None  # why it was exec'd although a fork server was meant to serve it
    marker: tuple[str, str] = ("", "")  # (SPAWN_MARKER, its value): what every process of its tree carries
    pidfd: Pidfd | None = field(default=None, repr=False)  # every signal to it or its group; None: already gone
    readers: list = field(default_factory=list, repr=False)  # wire.StdoutReaders of its stdout, stopped by close()
    # set once a stop's look found its exit under way (sample.exiting): the signal sent last before that look,
    # the only one that can have ended it (None: none had been sent, it ended by itself)
    exit_seen_after: tuple[signal.Signals | None] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr_text(self) -> str:
        """Its stderr's last STDERR_LIMIT characters, "…" in front where cut: a file's tail only is read (the
        child may have written any amount), a StderrRing's ring whole."""
        start = 0
        with suppress(AttributeError):  # a ring has no fileno: it holds the tail already
            start = max(0, os.fstat(self.stderr_file.fileno()).st_size - 4 * STDERR_LIMIT)  # UTF-8: <= 4 bytes a char
        self.stderr_file.seek(start)
        text = self.stderr_file.read().decode("utf-8", "replace")
        return text if len(text) <= STDERR_LIMIT and not start else "…" + text[-STDERR_LIMIT:]

    def wait_self_exit(self, timeout: float) -> bool:
        """Whether the process exited by itself within timeout."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def wait_for(self, ready: Callable[[], bool], idle_bound: float) -> bool:
        """Whether ready() came true (polled every 10 ms) while the process made progress (wait_progressing).

        A process that exits ends the wait too; ready() then says what it found.
        """

        def look(check: float) -> bool:
            if ready() or self.process.poll() is not None:
                return True
            time.sleep(check)
            return False

        return wait_progressing(look, self.clock(), idle_bound, 0.01) and ready()

    def moved(self) -> int:
        """Bytes the child has moved on its pipes, as the probe sees them: stdout read by its readers, stderr
        written (a StderrRing's count, or its file's size)."""
        stderr = getattr(self.stderr_file, "total", None)
        if stderr is None:
            with suppress(OSError, ValueError, AttributeError):
                stderr = os.fstat(self.stderr_file.fileno()).st_size
        return sum(reader.bytes for reader in self.readers) + (stderr or 0)

    def clock(self) -> Clock:
        """A no-progress clock of its tree and its pipes (progress.Clock, moved)."""
        return Clock(tree(self.pid), self.moved)

    def stop(self) -> None:
        """SIGTERM to its group, then SIGKILL after a bound; records which one ended it (_ended_after)."""
        self._stop(self.signal_group)

    def stop_process_only(self) -> None:
        """SIGTERM to the process alone (not its group), then SIGKILL after a bound; records which ended it."""
        self._stop(self.signal)

    def _stop(self, send: Callable[[int], bool]) -> None:
        """SIGTERM, then SIGKILL, each sent (send) unless it has ended, each followed by a wait of TERM_GRACE;
        ended_by is the last one sent before it was seen ended, None when it ended before any."""
        sent = None
        for sig in (signal.SIGTERM, signal.SIGKILL, None):
            if self._ended_after(sent) or sig is None:
                return
            if send(sig):
                sent = sig
            with suppress(subprocess.TimeoutExpired, ForkServerError):  # ended: its status went with its fork server
                self.process.wait(TERM_GRACE)

    def _ended_after(self, sent: signal.Signals | None) -> bool:
        """Whether it has ended, by the kernel's word (its pidfd reads as exited) when its status has not come yet:
        a forked fixture's comes from its fork server, later under load, and one that exited before the stop's
        first signal (a server that exits on server/discover) must not read as ended by it. Its status is then
        awaited (bounded), and ended_by is sent, the last signal sent before (none: left as it was): one that ended
        just after its SIGTERM's wait ran out, or whose status came late, ended by the SIGTERM, not by itself.

        One whose exit is under way (sample.exiting: its stdout may be at EOF already, its status not there yet)
        is waited for while it makes progress (an exit that unmaps much memory is kernel time, slow under load),
        and only the signal sent before the look that first found it exiting can be named as its ending: on a
        loaded machine the probe can look between the two, and a signal sent then changes nothing of how it
        ends. An exit that makes no progress for TERM_GRACE is not waited on further: the stop goes on."""
        if _running(self.process) and not self._exited():
            if not sample.exiting(self.pid):
                return False
            self.exit_seen_after = self.exit_seen_after or (sent,)
            if not self.wait_for(self._exited, TERM_GRACE):
                return False
        with suppress(subprocess.TimeoutExpired, ForkServerError):
            self.process.wait(TERM_GRACE)
        blamed = self.exit_seen_after[0] if self.exit_seen_after else sent
        if blamed is not None:
            self.ended_by = blamed.name
        return True

    def _exited(self) -> bool:
        """Whether the kernel says it has exited: its pidfd reads as exited (without one, nothing says so)."""
        return self.pidfd is not None and self.pidfd.exited()

    def signal(self, sig: int) -> bool:
        """Send sig to the process alone, through its pidfd; False once it is reaped."""
        return self.pidfd is not None and self.pidfd.signal(sig)

    def signal_group(self, sig: int) -> bool:
        """Send sig to the process group it leads (its session's), through its pidfd; False once none is left."""
        return self.pidfd is not None and self.pidfd.signal_group(sig)

    def close(self) -> None:
        """Release every fd the probe holds for it (stdin, stdout, stderr, a forked child's status socket).

        Called once its arm is over (arm_scope): a sweep spawns thousands of children, and fds kept
        until the end of the run would pass 1024 (select(2)'s limit) and the process's own limit.
        Its readers are stopped first, so none reads an fd number that a later arm has been given.
        """
        for reader in self.readers:
            reader.pause()
        self.readers.clear()
        if isinstance(self.process, ForkedProcess):
            self.process.release()
        for stream in (self.process.stdin, self.process.stdout, self.stderr_file):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        if not _running(self.process):  # reaped: reap_all has nothing left to do for it
            self.supervisor.untrack(self.process)
            if self.pidfd is not None:
                self.pidfd.close()

    def shut_down(self, exit_bound: float) -> Shutdown:
        """The host contract's shutdown (host_contract.shutdown_child: close stdin, drain, wait exit_bound, then
        escalate), keeping as stop() does only the signal that ended it (None when it exited by itself)."""
        done = shutdown_child(
            self.process, exit_bound=exit_bound, term_bound=TERM_GRACE, kill_bound=TERM_GRACE, pidfd=self.pidfd
        )
        self.ended_by = None if done.ended_by == "self" else done.ended_by
        return done

    def record(self) -> dict:
        """The raw exit facts of this child."""
        code = self.process.returncode
        return {
            "pid": self.pid,
            "exit_code": code,
            "signal": signal.Signals(-code).name if code is not None and code < 0 else None,
            "ended_by": self.ended_by or ("self" if code is not None else None),
            "launch": "fork_server" if isinstance(self.process, ForkedProcess) else "exec",
            **({"fork_server_unavailable": self.fork_server_unavailable} if self.fork_server_unavailable else {}),
            "stderr": self.stderr_text(),
        }


@dataclass(frozen=True)
class Sandbox:
    """The folders of one started server alone (Supervisor.sandbox): its HOME, XDG folders, TMPDIR and working
    folder, inside the run's folder (removed with it), so copies of one server started side by side share no
    lock file, cache or database they keep there. What its command line names stays shared: a file or folder on
    it (reached from the sandbox's working folder: reachable), a port it binds (method.md, "Arms side by side")."""

    run_folder: str
    name: str  # its folder, relative to the run's

    def path(self, sub: str) -> str:
        """One of its folders, as this machine names it (never recorded: described says it relative)."""
        return os.path.join(self.run_folder, self.name, sub)

    def env(self) -> dict[str, str]:
        """The variables that point a server at its own folders."""
        return {variable: self.path(sub) for variable, sub in SANDBOX_FOLDERS.items()}

    def cwd(self) -> str:
        """Its working folder: a server that writes where it runs writes here."""
        return self.path(SANDBOX_WORK)

    def described(self) -> dict[str, str]:
        """What a record says of it: each folder relative to the run's folder, never a path of this machine."""
        folders = {**SANDBOX_FOLDERS, "cwd": SANDBOX_WORK}
        return {variable: f"{self.name}/{sub}" for variable, sub in folders.items()}


def reachable(argv: list[str], here: str) -> list[str]:
    """argv as started in a sandbox's working folder: each word that names a file or folder found relative to here
    (the caller's working folder) becomes here joined to it, the same file by an absolute path (not normalised: a
    `..` after a symlink names what it named), so what the command names is still reached. The program only when
    it holds a slash (`./server`): a bare one is looked for on PATH, not here. Left as given: an absolute word, an
    empty one, one naming nothing here, a path inside a word (`--config=x.json`, a shell's script); a word naming
    a module or a package that a file or folder here also names (`python -m pkg`) is taken for the path."""
    return [
        os.path.join(here, word)
        if word and not os.path.isabs(word) and (at > 0 or "/" in word) and os.path.exists(os.path.join(here, word))
        else word
        for at, word in enumerate(argv)
    ]


class _Shared:
    """What every supervisor of the process shares: its children are one set, whoever started them, so the
    forks in flight, the orphans adopted among them and the pipes the probe drains are known once for all the
    supervisors that start them (the module's docstring)."""

    def __init__(self) -> None:
        self.forking = threading.Lock()  # held across each Popen of any of them (fork to exec): forks_settled
        self.lock = threading.Lock()
        self.members: list[Supervisor] = []  # the supervisors sharing it, until each ends
        self.orphans: dict[int, Pidfd] = {}  # adopted(): each held from its first reading until reaped
        self.drained: set[int] = set()  # inodes of the pipes StderrRings drain (drained_pipes)


_CHILDREN = _Shared()  # the process's children, as one set for all its supervisors (the module's docstring)


class Supervisor:
    """The one owner of a run's processes (see the module's docstring): what it started with their pidfds, the
    lock held across each Popen, the fork servers (ForkServers fills them), the stopping flag, the run's folder,
    the arm scopes, the orphans adopted and the pipes drained. It spawns, stops (stop) and reaps (reap_all, end).

    Every supervisor of the process shares what belongs to the process's children as one set (_CHILDREN: the
    Popen lock, the adopted orphans, the drained pipes), so none takes another's child for an orphan.

    A context manager for one run: leaving it ends the run (end) when the run ended by itself or by an
    ordinary failure; a run left by a signal (a BaseException such as cli.Interrupted, or any exception once
    start.received has one: its Interrupted may come out of a thread pool as another) is stopped, with the
    short grace, unless it is already, and its folder left to the guardian (_close).
    """

    def __init__(self) -> None:
        self._shared = _CHILDREN
        self._live: dict[subprocess.Popen | ForkedProcess, Pidfd | None] = {}  # what it started, and its pidfd
        self._live_lock = threading.Lock()
        self.fork_servers: dict[tuple[str, tuple], ForkServer] = {}  # by _server_key; ForkServers starts them
        self._stopping = threading.Event()
        self._folder: str | None = None  # run_folder(), made on first use
        self._used = False  # whether it started a process or made its folder: else its end has nothing to do
        self._ended = False
        self._arm = threading.local()  # the children spawned by the arm running in this thread (arm_scope)
        with self._shared.lock:
            self._shared.members.append(self)

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, kind: type | None, value: BaseException | None, trace: TracebackType | None) -> None:
        if kind is not None and (start.received or not issubclass(kind, Exception)):
            if not self.stopping():
                self.stop()
            self._close(remove_folder=False)
        elif not self._ended:
            self.end()

    def stopping(self) -> bool:
        """Whether the run is being cut short: waits end early, writes give up, spawning is refused."""
        return self._stopping.is_set()

    def stop(self) -> int:
        """The one way a run is cut short (SIGINT, SIGTERM): refuse every further spawn, then kill what is
        tracked and everything marked, with a short grace; returns how many were alive."""
        self._stopping.set()
        with self._live_lock:
            tracked = [pidfd for pidfd in self._live.values() if pidfd is not None]
        for pidfd in tracked:  # at once, before any scan: their ends end the arms' reading threads too
            with suppress(OSError):  # closed meanwhile by its arm
                pidfd.signal_group(signal.SIGTERM)
        return self.reap_all(STOP_GRACE)

    def end(self) -> int:
        """The end of a run, every arm over: kill what outlived its arm (reap_all), close any fork server still
        open and remove the run's folder; returns how many processes were alive. A signal during it stops
        the run instead. One that started nothing has nothing to reap (what carries the marker, the process's,
        is another supervisor's)."""
        self._ended = True
        if not self._used:
            self._close()
            return 0
        stopped = False
        try:
            return self.reap_all()
        except BaseException:
            stopped = True
            self.stop()
            raise
        finally:
            self._close(remove_folder=not stopped)  # a signal's run leaves it to the guardian, as __exit__'s does

    def _close(self, remove_folder: bool = True) -> None:
        """What the run holds besides processes: its fork servers still open (a run cut short), its folder, its
        place among the supervisors it shares the process's children with.

        A run left by a signal leaves its folder to the guardian (remove_folder False), which removes it once
        this process has ended, as it does next: the folder holds a sandbox per start, hundreds of folders, and
        their removal took up to a second of the 2 s a signal has on a loaded machine."""
        for server in [self.fork_servers.pop(key) for key in list(self.fork_servers)]:
            server.close(TERM_GRACE)
        if self._folder is not None and remove_folder:
            shutil.rmtree(self._folder, ignore_errors=True)
        with self._shared.lock:
            if self in self._shared.members:
                self._shared.members.remove(self)

    def reap_all(self, grace: float = TERM_GRACE) -> int:
        """Kill what it spawned (kept tracked until waited for, so no orphan's reaping takes its exit) and their
        trees; the last supervisor of the process to reap also kills by marker and the orphans adopted (others
        still live carry the same marker, and an orphan cannot be told to be of one run or another); returns how
        many were alive."""
        with self._live_lock:
            spawned = dict(self._live)
        with self._shared.lock:
            last = all(member is self or member._ended for member in self._shared.members)

        def find() -> dict[int, dict]:
            if last:
                return {p["pid"]: p for p in self.run_processes()}
            trees = [pid for process in spawned for pid in (process.pid, *sample.descendants(process.pid))]
            return {pid: {"pid": pid, "cmdline": sample.cmdline(pid)} for pid in trees if sample.is_live(pid)}

        def ours(pid: int) -> bool:
            return sample.carries(pid, MARKER, RUN_ID, argv=True) or self._adopted(pid)

        survivors = kill_rounds(find, ours, grace, spawned)
        for process in spawned:
            with suppress(subprocess.TimeoutExpired, ForkServerError):
                process.wait(grace)
        with self._live_lock:
            for process in spawned:
                self._live.pop(process, None)
        self.adopted()  # the orphans killed above, reaped
        return len(survivors)

    def run_processes(self) -> list[dict]:
        """The live (non-zombie) processes of this run: those carrying its marker, the probe and its ancestors
        excepted, and the orphans adopted (adopted(): one that dropped every marker included)."""
        never = _self_and_ancestors()
        marked = [p for p in sample.marked_processes(MARKER, RUN_ID, argv=True) if p["pid"] not in never]
        found = {p["pid"] for p in marked}
        return marked + [
            {"pid": p["pid"], "state": sample.proc_state(p["pid"]), "cmdline": p["cmdline"]}
            for p in self.adopted()
            if p["pid"] not in found
        ]

    def adopted(self) -> list[dict]:
        """The live orphans this process adopted (adoption_refused): each child of it that no supervisor sharing
        this one's children started (not tracked, not a fork server of theirs), not the guardian and not a fork
        of ours before its exec, with whether it carries the run marker (marked: then its marker finds it too);
        pid, cmdline, marked.

        Each is held by a pidfd from its first reading, a zombie too (an orphan that forked and exited between two
        readings: a double fork's middle process), and one held that has exited is reaped here through it
        (Pidfd.reap): nobody else waits for an orphan. The process's other children not spawn's: an SDK
        environment's commands (envs.py: they run before any arm, never while a proof or a reap looks) and a
        caller's own (a test's), which count as adopted: a proof is refused while they run, and a caller that
        reaps the run (reap_all) holds none of its own."""
        me, shared = os.getpid(), self._shared
        with shared.forking, _guardian_lock, shared.lock:
            started = {process.pid for process in _guardian}
            for member in shared.members:
                started |= member._started()
            for pid in sample.children(me, exited=True):
                if pid in started or pid in shared.orphans or sample.unexeced_fork(pid):
                    continue
                if (held := Pidfd.open(pid, lambda p: sample.parent_pid(p) == me)) is not None:
                    shared.orphans[pid] = held
            found = []
            for pid, held in list(shared.orphans.items()):
                if held.exited():
                    held.reap()
                    held.close()
                    del shared.orphans[pid]
                else:
                    marked = sample.carries(pid, MARKER, RUN_ID, argv=True)
                    found.append({"pid": pid, "cmdline": sample.cmdline(pid), "marked": marked})
        return found

    def _started(self) -> set[int]:
        """The pids of what it started and has not seen waited for: its tracked processes and fork servers."""
        with self._live_lock:
            return {process.pid for process in self._live} | {s.process.pid for s in list(self.fork_servers.values())}

    def _adopted(self, pid: int) -> bool:
        """Whether pid is an orphan held (adopted()) and still this process's child."""
        return pid in self._shared.orphans and sample.parent_pid(pid) == os.getpid()

    def drained_pipes(self) -> set[int]:
        """The inodes of the pipes the probe drains while its proofs look (StderrRing: a server's stderr, a host's
        stdout and stderr, which a host's server may inherit), whichever supervisor sharing this one's children
        drains them: a writer blocked on one is woken by the probe's next read, so the proof rule never takes
        "only the probe holds the other end" as ruling such a pipe out."""
        with self._shared.lock:
            return set(self._shared.drained)

    def _drains(self, inode: int, draining: bool) -> None:
        """A StderrRing starts (draining) or stops draining the pipe inode."""
        with self._shared.lock:
            if draining:
                self._shared.drained.add(inode)
            else:
                self._shared.drained.discard(inode)

    @contextmanager
    def arm_scope(self) -> Iterator[None]:
        """The block of one arm on this thread: current() is this supervisor inside it, and the fds of every
        child it spawns here are closed once the block ends (Child.close)."""
        previous = getattr(self._arm, "children", None), getattr(_current, "supervisor", None)
        self._arm.children = children = []
        _current.supervisor = self
        try:
            yield
        finally:
            self._arm.children, _current.supervisor = previous
            for child in children:
                child.close()

    def _in_scope(self, child: Child) -> Child:
        if (children := getattr(self._arm, "children", None)) is not None:
            children.append(child)
        return child

    def spawn(
        self, python: str, script: str, args: list[str], env: dict[str, str], pass_fds: tuple[int, ...] = ()
    ) -> Child:
        """Start a fixture script under python, in its own session, tagged with the run marker.

        It is forked from the SDK's fork server when one is serving (ForkServers), exec'd otherwise.
        """
        if self.stopping():
            raise Stopping("the run is stopping")
        stderr_file = tempfile.TemporaryFile()
        server = self.fork_servers.get(_server_key(python, env))
        process, unavailable, spawn_id = None, None, uuid.uuid4().hex
        if server is not None:
            try:
                process = server.fork(FIXTURES / script, args, stderr_file.fileno(), pass_fds, spawn_id)
            except ForkServerUnavailable as exc:
                unavailable = str(exc)
        if process is None:
            fixture_env = {**env, **self.fixture_env(), SPAWN_MARKER: spawn_id}
            process, pidfd = self._popen([python, str(FIXTURES / script), *args], stderr_file, fixture_env, pass_fds)
        else:
            pidfd = self._track(process, process.pidfd)
        marker = (SPAWN_MARKER, spawn_id)
        child = Child(
            process,
            time.monotonic(),
            stderr_file,
            self,
            fork_server_unavailable=unavailable,
            marker=marker,
            pidfd=pidfd,
        )
        return self._in_scope(child)

    def spawn_command(
        self, command: str, env: dict[str, str] | None = None, inherit: bool = False, sandbox: Sandbox | None = None
    ) -> tuple[Child, str]:
        """Start a server command (split as a shell would, run by no shell of ours) in its own session.

        Its environment is a host's (child_env: the defaults, env, and the whole of ours only when
        inherit), with the run marker and a marker of its own (SERVER_MARKER), so its tree is
        found in /proc however it forks; stdout is a pipe for the wire, stderr drained into a StderrRing.
        In a sandbox, its folders' variables come before env (a --env HOME given keeps its value) and it starts
        in the sandbox's working folder. Returns the child and its server marker's value. ValueError for a
        command shlex cannot split, OSError for one that cannot start.
        """
        argv = shlex.split(command)
        if not argv:
            raise ValueError("empty server command")
        server_id = uuid.uuid4().hex
        given = {**(sandbox.env() if sandbox else {}), **(env or {}), SERVER_MARKER: server_id}
        cwd = sandbox.cwd() if sandbox else None
        process, pidfd = self._popen(argv, subprocess.PIPE, given, inherit=inherit, cwd=cwd)
        child = Child(process, time.monotonic(), StderrRing(process.stderr, self), self, pidfd=pidfd)
        return self._in_scope(child), server_id

    def _popen(
        self,
        argv: list[str],
        stderr,
        env: dict[str, str],
        pass_fds: tuple[int, ...] = (),
        inherit: bool = False,
        cwd: str | None = None,
    ) -> tuple[subprocess.Popen, Pidfd | None]:
        """Exec argv as a shell would (from_a_shell) in a session of its own, with child_env and stdin, stdout
        pipes, in cwd (None: ours); tracked with its pidfd."""
        if self.stopping():
            raise Stopping("the run is stopping")
        _guard()
        with self._shared.forking:  # tracked before the lock is let go: adopted() never takes it for an orphan
            given = child_env(env, inherit)
            process = subprocess.Popen(
                from_a_shell(argv, given),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=given,
                start_new_session=True,
                pass_fds=pass_fds,
                cwd=cwd,
            )
            return process, self._track(process, Pidfd.open(process.pid))  # our child, not waited for: its own pid

    def forks_settled(self) -> None:
        """Return once no child the probe starts (this run's, or a supervisor's sharing its children) is between
        fork and exec. Such a child holds a copy of every fd the probe had when it forked (close-on-exec closes
        them only at its exec): an end of another arm's pipe that the probe has just closed stays open until
        then (S8: the server's write to a stdout nobody reads succeeds)."""
        with self._shared.forking:
            pass

    def _track(self, process: subprocess.Popen | ForkedProcess, pidfd: Pidfd | None) -> Pidfd | None:
        with self._live_lock:
            self._live[process] = pidfd
            self._used = True
        return pidfd

    def untrack(self, process: subprocess.Popen | ForkedProcess) -> None:
        """Forget a process seen reaped (Child.close): reap_all has nothing left to do for it."""
        with self._live_lock:
            self._live.pop(process, None)

    def run_folder(self) -> str:
        """The folder of every temporary file and folder of this run (a fixture's TMPDIR too): one place, removed
        at the run's end, and by the guardian (it is inside the guardian's) once this process has ended,
        however it ended."""
        inside = _guard()
        with self._live_lock:
            if self._folder is None:
                self._folder = tempfile.mkdtemp(prefix="run-", dir=inside)
                self._used = True
            return self._folder

    def sandbox(self) -> Sandbox:
        """A new sandbox in the run's folder: each of its folders made, private to this user (XDG_RUNTIME_DIR
        must be)."""
        name = os.path.basename(tempfile.mkdtemp(prefix="sandbox-", dir=self.run_folder()))
        made = Sandbox(self.run_folder(), name)
        for sub in (*SANDBOX_FOLDERS.values(), SANDBOX_WORK):
            os.mkdir(made.path(sub), 0o700)
        return made

    def fixture_env(self) -> dict[str, str]:
        """What our own fixtures get beyond a host's environment: their temporary files in the run's folder."""
        return {"TMPDIR": self.run_folder()}


PR_SET_DUMPABLE = 4


def undumpable() -> None:
    """Make this process's /proc/PID/environ, fd, mem (and core dumps) unreadable to other processes of its
    user: a server under test runs as the probe's user, and its parent's environ holds the probe's secrets.
    Exec resets it, so every process the probe starts stays readable to the probe (markers, proofs)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _guard() -> str:
    """Start this process's guardian once, before its first child: guardian.py, in a session of its own,
    holding the read end of a pipe whose write end only this process holds. When this process ends,
    however it ends (SIGKILL included), the pipe reads EOF and the guardian reaps everything marked, then
    removes its folder, where every supervisor makes its run folder. The run marker and the folder reach it
    through that pipe, not its command line or environment: a process found by its command line carrying
    the marker is one to reap. This process becomes a child subreaper first (adoption_refused), so every
    orphan of what it starts re-parents to it. Returns that folder."""
    with _guardian_lock:
        if _guardian:
            return _guardian_folder[0]
        adoption_refused()
        folder = tempfile.mkdtemp(prefix="probe-run-")
        read_fd, write_fd = os.pipe()  # both ends close-on-exec: no child of ours holds the write end
        log = tempfile.TemporaryFile()
        env = {name: os.environ[name] for name in GUARDIAN_ENV if name in os.environ}
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH")])
        )
        try:
            _guardian.append(
                subprocess.Popen(
                    [sys.executable, "-m", "stdio_probe.core.guardian"],
                    stdin=read_fd,
                    stdout=log,  # not our stdout or stderr: a reader of ours would wait for the guardian's end
                    stderr=log,
                    env=env,
                    start_new_session=True,
                )
            )
            os.write(write_fd, f"{RUN_ID}\n{folder}\n".encode())  # a pipe's buffer holds it: never blocks
        except BaseException:
            os.close(write_fd)
            os.rmdir(folder)
            raise
        finally:
            os.close(read_fd)
            log.close()
        _guardian_fd.append(write_fd)
        _guardian_folder.append(folder)
        return folder


class StderrRing:
    """A child's stderr drained by a thread into a ring of the last STDERR_LIMIT bytes.

    A server we did not write may flood stderr: a file would grow without bound, a pipe left
    unread would block it. It offers the two calls Child makes of a stderr file (seek, read).
    """

    def __init__(self, stream, supervisor: Supervisor) -> None:
        self._ring = bytearray()
        self.total = 0
        self._lock = threading.Lock()
        # the thread reads a descriptor of its own: the stream's owner (Child.close: a host's stdout is its
        # process.stdout) may close the stream while the thread reads, and its number may then be reused by
        # another arm's pipe, which the thread would drain
        self._fd = os.dup(stream.fileno())
        stream.close()
        self._inode = os.fstat(self._fd).st_ino
        self._supervisor = supervisor  # told which pipe it drains, for as long as it does (drained_pipes)
        supervisor._drains(self._inode, True)
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                with self._lock:
                    self.total += len(chunk)
                    self._ring += chunk
                    del self._ring[:-STDERR_LIMIT]
        finally:
            os.close(self._fd)
            self._supervisor._drains(self._inode, False)

    def seek(self, offset: int) -> None:
        """Child seeks before reading a file; a ring is always read whole."""

    def close(self) -> None:
        """Child closes a stderr file after its arm; the ring's thread closes its pipe at EOF itself."""

    def read(self) -> bytes:
        self._thread.join(0.2)  # what the child wrote just before it ended
        with self._lock:
            return bytes(self._ring)


_DEFAULT_SIGINT = (  # the stub's own interpreter ignores SIGPIPE and SIGXFSZ: those are reset too, as Popen does
    "import os, signal, sys\n"
    "for name in ('SIGINT', 'SIGQUIT', 'SIGPIPE', 'SIGXFSZ'):\n"
    "    signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
    "if sys.argv[1] == '-':\n"
    "    os.environ.pop('LC_CTYPE', None)\n"
    "else:\n"
    "    os.environ['LC_CTYPE'] = sys.argv[1][1:]\n"
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def from_a_shell(argv: list[str], env: dict[str, str]) -> list[str]:
    """argv started with the signal dispositions a shell gives a command, in env: through the stub that restores
    SIGINT's and SIGQUIT's defaults (_with_default_sigint) where the probe ignores either (a background job
    ignores both; a caller may restore SIGINT and leave SIGQUIT ignored), else as it is. Restored at
    exec, before the program starts: what it then does with them at start-up (Python's KeyboardInterrupt
    handler, an SDK's handler installed at import) is its own, as from a terminal."""
    ignored = any(signal.getsignal(signum) is signal.SIG_IGN for signum in (signal.SIGINT, signal.SIGQUIT))
    return _with_default_sigint(argv, env) if ignored else argv


def _with_default_sigint(argv: list[str], env: dict[str, str]) -> list[str]:
    """argv run with SIGINT's and SIGQUIT's default dispositions, in env as given.

    An ignored signal stays ignored across exec, so a server (S9) or a fixture (L12) started from a probe
    that ignores SIGINT would ignore it as it never would from a terminal. A stub resets them (and SIGPIPE,
    SIGXFSZ, which its own interpreter ignores) and execs argv (same pid); Popen's preexec_fn would do it
    without the stub but is unsafe in a probe that runs threads. The stub's interpreter, in a C locale, sets
    LC_CTYPE for itself (PEP 538's coercion, which -I cannot turn off): the stub puts LC_CTYPE back as env had
    it ('-': not there), or a server would get a variable no host gave it.
    """
    if shutil.which(argv[0]) is None:
        raise FileNotFoundError(f"{argv[0]} not found")
    given = f"={env['LC_CTYPE']}" if "LC_CTYPE" in env else "-"
    return [sys.executable, "-I", "-S", "-c", _DEFAULT_SIGINT, given, *argv]


class ForkServers:
    """The fork servers of a run, one per SDK interpreter, each alive only around its interpreter's arms.

    A server is started `ahead` interpreters before its arms run (its preload overlaps the arms of the
    ones before it) and closed after its interpreter's last arm: a sweep of many SDKs never preloads
    them all at once, which would leave the first arms waiting for their servers, nor keeps them all.
    """

    def __init__(
        self, supervisor: Supervisor, interpreters: list[tuple[str, dict[str, str]]], arms_each: int, ahead: int
    ) -> None:
        self._supervisor = supervisor
        self._servers = supervisor.fork_servers  # the supervisor's: spawn forks from what is there
        self._keys = [_server_key(python, env) for python, env in interpreters]
        self._env = {key: (python, env) for key, (python, env) in zip(self._keys, interpreters, strict=True)}
        self._left = {key: arms_each * self._keys.count(key) for key in self._env}
        self._ahead = ahead
        self._lock = threading.Lock()

    def begin(self, index: int) -> None:
        """Before an arm of interpreter index: its server and the next `ahead` interpreters' are started
        (one that cannot start leaves its fixtures exec'd); none once the run is being cut short, as no spawn is."""
        with self._lock:
            if self._supervisor.stopping():
                return
            for key in self._keys[index : index + 1 + self._ahead]:
                if key not in self._servers and self._left[key]:
                    python, env = self._env[key]
                    run = self._supervisor
                    with suppress(OSError):  # no server (no fds, no memory): its fixtures are exec'd
                        server_env = {**child_env(env), **run.fixture_env(), SPAWN_MARKER: SPAWN_PLACEHOLDER}
                        command, script = from_a_shell([python], server_env), FIXTURES / "fork_server.py"
                        self._servers[key] = ForkServer(command, script, server_env, run.run_folder())

    def end(self, index: int) -> None:
        """After an arm of interpreter index: its last arm closes its server."""
        key = self._keys[index]
        with self._lock:
            self._left[key] -= 1
            server = self._servers.pop(key, None) if not self._left[key] else None
        if server is not None:
            server.close(TERM_GRACE)

    def close(self) -> None:
        """Close every server still open (a run cut short)."""
        with self._lock:
            servers = [self._servers.pop(key) for key in self._env if key in self._servers]
        for server in servers:
            server.close(TERM_GRACE)


def _server_key(python: str, env: dict[str, str]) -> tuple[str, tuple]:
    return python, tuple(sorted(env.items()))


def child_env(env: dict[str, str], inherit: bool = False) -> dict[str, str]:
    """The environment of every process we start: what a host gives a server, env, and the run marker.

    A host passes only HOST_DEFAULT_ENV of its own (values that are shell functions, "()...",
    skipped as the SDK skips them) and what it was configured with: env holds that (an SDK's
    PYTHONPATH, a server's --env). The whole of ours only when inherit (--inherit-env).
    """
    if inherit:
        base = dict(os.environ)
    else:
        base = {name: os.environ[name] for name in HOST_DEFAULT_ENV if not os.environ.get(name, "()").startswith("()")}
    return {**base, **env, MARKER: RUN_ID}


def run_processes() -> list[dict]:
    """The live processes of the run of the arm in this thread (current().run_processes)."""
    return current().run_processes()


PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def adoption_refused() -> str | None:
    """Make this process a child subreaper (prctl), once; why it cannot be one, None when it is.

    An orphan re-parents to the nearest child subreaper above it, not to init: every orphan of what this
    process starts, however it left (a double fork, a session of its own, an empty environment, a pidfd of
    its own), becomes a child of this process, where Supervisor.adopted() finds it. The kernel marks the tree
    already started too (Linux 4.11 on). Unprivileged, and in no container or CI runner refused: a cgroup of the
    run's own would need a delegated cgroup v2 subtree, which a CI runner's user does not have.

    Process-wide, as the kernel keeps it: a one-time call (_guard, before the process's first child), not a
    supervisor's; the orphans it brings are held by the supervisors (Supervisor.adopted)."""
    if not sys.platform.startswith("linux"):
        return "not Linux: no child subreaper"
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}"
    return None


def _self_and_ancestors() -> set[int]:
    """The probe and every process above it: never signalled, whatever environment they carry."""
    found, pid = set(), os.getpid()
    while pid and pid not in found:
        found.add(pid)
        pid = sample.parent_pid(pid) or 0
    return found


def reap_marked(name: str, value: str, grace: float = TERM_GRACE, argv: bool = False) -> list[dict]:
    """Kill the live processes that carry name=value (sample.carries: one arm's, re-parented ones included;
    with argv, in a command line too).

    Returns every one found (pid, state, cmdline, ppid), as found before its kill.
    """

    def find() -> dict[int, dict]:
        found = sample.marked_processes(name, value, argv)
        return {p["pid"]: {**p, "ppid": sample.parent_pid(p["pid"])} for p in found}

    found = kill_rounds(find, lambda pid: sample.carries(pid, name, value, argv), grace)
    return [found[pid] for pid in sorted(found)]


def kill_rounds(
    find: Callable[[], dict[int, dict]],
    ours: Callable[[int], bool],
    grace: float,
    spawned: dict[subprocess.Popen | ForkedProcess, Pidfd | None] | None = None,
) -> dict[int, dict]:
    """Reap what find() returns until it returns nothing: SIGTERM to each process found, rescanning for
    grace seconds (a new one found gets its SIGTERM too), then rounds of rescan and SIGKILL for at most
    KILL_BOUND seconds, to each process and to every process group one of them leads. A process that forks
    a new pid before it dies (a pid hopper) dies with its group, or is found by the next scan.

    Each process found is held by a pidfd opened once ours(pid) read it as ours (Pidfd.open), and every
    signal goes through a pidfd: what we spawned through its own, a group through its leader's, which
    reaches the group even once the leader is reaped and never a stranger given its number. What we spawned
    is polled meanwhile, so its exits are reaped. Returns every process found in any round, as first found.

    It is done after QUIET_SCANS quiet scans in a row. A scan is quiet when no process held is alive and every
    process it found was refused as not ours while alive (sample.is_live). One it found that was gone before it
    could be held, or that was held and has ended since, makes it not quiet: on a loaded machine a scan reads a
    hopper mid-hop, its successor forked after its pid was read, and three such scans in a row once ended a stop
    with the successor alive. A pid found again whose held process has ended names another process now (or one
    that ended since the scan): it is held anew, the old pidfd kept for the group it led."""
    spawned = spawned or {}
    never = _self_and_ancestors()  # whatever environment they carry: never held, so neither are their groups
    seen: dict[int, dict] = {}
    opened: list[Pidfd] = []
    held = {pidfd.pid: pidfd for pidfd in spawned.values() if pidfd is not None}
    former: list[Pidfd] = []  # held once under a pid found again after they ended: the groups they led
    try:
        for sig, bound in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_BOUND)):
            signalled: set[int] = set()
            deadline, quiet = time.monotonic() + bound, 0
            while True:
                found = {pid: p for pid, p in find().items() if pid not in never}
                seen |= {pid: p for pid, p in found.items() if pid not in seen}
                for pid in [pid for pid in found.keys() & held.keys() if held[pid].exited()]:
                    former.append(held.pop(pid))
                    signalled.discard(pid)
                for pid in found.keys() - held.keys():
                    if (pidfd := Pidfd.open(pid, ours)) is not None:
                        held[pid] = pidfd
                        opened.append(pidfd)
                refused = {pid for pid in found.keys() - held.keys() if sample.is_live(pid)}  # alive, not ours
                live = {pid for pid, pidfd in held.items() if not pidfd.exited()}
                for pid in live if sig == signal.SIGKILL else live - signalled:
                    _send(held[pid], sig)
                for pidfd in [*held.values(), *former] if sig == signal.SIGKILL else ():
                    _send(pidfd, sig, group=True)
                signalled |= live
                for process in spawned:
                    _running(process)
                quiet = 0 if live or found.keys() - refused else quiet + 1
                if quiet >= QUIET_SCANS:
                    return seen
                if time.monotonic() >= deadline:
                    break
                time.sleep(SCAN_INTERVAL)
        return seen
    finally:
        for pidfd in opened:
            pidfd.close()


def _send(pidfd: Pidfd, sig: int, group: bool = False) -> None:
    """sig to pidfd's process, or to the group it leads if any (none: the kernel finds no member, and nothing is
    sent). What we spawned is held by its Child too, whose arm may close it meanwhile: nothing is sent then."""
    with suppress(OSError):
        pidfd.signal_group(sig) if group else pidfd.signal(sig)


def _running(process: subprocess.Popen | ForkedProcess) -> bool:
    """Whether it has not been seen to exit (one whose exit status was lost with its fork server has ended)."""
    try:
        return process.poll() is None
    except ForkServerError:
        return False

"""The host contract: rules a host can enforce around the MCP Python SDK without forking it.

Each function prevents one of the probe's cases and is proven against the
unpatched SDK by that case's `mitigated` arm. Import it, or copy it: it needs
only the standard library (the async helpers import anyio, which every mcp
release depends on, when called). It never imports mcp or anyio at module
level (the probe's parent process must not); the group helpers take the group
as a parameter and touch only what they name below.

  shutdown_child       L1  close stdin, drain stdout to EOF, bounded wait, SIGTERM, SIGKILL
                       L13 after a request timeout: a server mute after a fatal error in a tool
  connect_or_close     L3  a rejected connect_to_server closes the transport it opened
  disconnect_verified  L4  disconnect, then remove tools still routed to the gone session
  sanitize_outbound    L2, L7  replace lone surrogates before a payload reaches the writer
  spawned_server       L8  the pid of the server stdio_client just started (it does not say)
  fail_when_exits      L8  cancel the requests in flight once that server has exited
  run_connection       L10 run the connection in a task of its own: a native cancel reaches it once,
                           as an anyio cancellation its shielded shutdown honours
  end_server_group     L9  once stdio_client's context has exited, end what is left of the server's process group
  termination_grace    L11 give a server the grace its longest tool call needs before the SDK's SIGTERM
  Pidfd                every rule's signals: through a pidfd of the server, never a pid or group number
                       that may have been reused since the server was reaped

The host checks (--host, method.md "Host checks") judge any host by the same rules: shutdown_child is
what H1, H2 and H3 expect of a host's shutdown, fail_when_exits H5's, end_server_group H4's.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.client.session_group import ClientSessionGroup, ClientSessionParameters, ServerParameters

log = logging.getLogger(__name__)

EndedBy = Literal["self", "SIGTERM", "SIGKILL"]
Payload = TypeVar("Payload")
Result = TypeVar("Result")
Streams = TypeVar("Streams")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Shutdown:
    """How a child ended: the step that ended it (None: it survived SIGKILL's bound), and when.

    stdout_eof is True once stdout reached EOF (and when it was not piped);
    steps lists each transition as (step, seconds since stdin was closed).
    """

    pid: int
    ended_by: EndedBy | None
    exit_code: int | None
    elapsed_s: float
    stdout_bytes: int
    stdout_eof: bool
    steps: list[tuple[str, float]] = field(default_factory=list)


PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2  # pidfd_send_signal(2)'s flag (Linux 6.9): the pidfd's own process group


class Pidfd:
    """A process held by a pidfd (pidfd_open(2)): a signal sent through it reaches that process, or the process
    group it leads, and never one that took its pid or group number after it was reaped.

    A pid names a process only until the process is reaped; the kernel may hand the number to another the next
    moment (on a busy machine within minutes), and kill(pid) or killpg(pgid) would then reach a stranger.
    An fd number is handed on the same way once closed: each use of the fd holds a lock that close() takes, so a
    signal sent from one thread while another closes it goes to this process or nowhere, never through a
    number the next pidfd_open of a third thread took.
    """

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd: int | None = fd
        self._using = threading.RLock()  # held while the fd is used: close() waits for it

    @classmethod
    def open(cls, pid: int, ours: Callable[[int], bool] | None = None) -> Pidfd | None:
        """A pidfd of pid, or None when pid is gone or not ours.

        Without ours: pid is the caller's own child that it has not waited for (only the caller can reap it,
        so the number is still its child's). With ours: ours(pid) reads /proc once the pidfd is open (a marker,
        a parent), and the process must not have been reaped by then: so what ours read was the held process's.
        """
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            return None
        except OSError as exc:  # a kernel before 5.3 has no pidfd: nothing is held, so nothing is signalled
            if exc.errno == errno.ENOSYS:
                return None
            raise
        held = cls(pid, fd)
        try:
            if ours is None or (ours(pid) and held.signal(0)):
                return held
        except PermissionError:  # a process of another user's that carries our marker: never ours to signal
            pass
        held.close()
        return None

    def signal(self, sig: int) -> bool:
        """Send sig to the process (0 sends nothing: whether it is not reaped yet); False once it is reaped."""
        with self._using:
            if self.fd is None:
                return False
            try:
                signal.pidfd_send_signal(self.fd, sig)
            except ProcessLookupError:
                return False
            return True

    def signal_group(self, sig: int) -> bool:
        """Send sig to the process group this process leads, by the pidfd: once the leader is reaped the group
        it led is still reached, and a new group with its number never is. False when no member is left.

        A kernel before 6.9 has no group flag: then the members are signalled one by one, each checked to be in
        the group while the leader is not reaped (after that, the number is no longer the leader's to trust)."""
        with self._using:
            if self.fd is None:
                return False
            try:
                signal.pidfd_send_signal(self.fd, sig, None, PIDFD_SIGNAL_PROCESS_GROUP)
            except ProcessLookupError:
                return False
            except OSError as exc:
                if exc.errno != errno.EINVAL:
                    raise
                return self._signal_members(sig)
            return True

    def _signal_members(self, sig: int) -> bool:
        sent = False
        for pid in sorted(group_members(self.pid)) if self.signal(0) else ():
            member = Pidfd.open(pid, lambda p: _group_of(p) == self.pid and self.signal(0))
            if member is not None:
                sent = member.signal(sig) or sent
                member.close()
        return sent

    def exited(self) -> bool:
        """Whether the process has exited, zombie or reaped (its pidfd reads as readable then); closed: gone."""
        with self._using:
            if self.fd is None:
                return True
            poller = select.poll()
            poller.register(self.fd, select.POLLIN)
            return bool(poller.poll(0))

    def reap(self) -> None:
        """Collect the exit status of this process, a child of the caller's that has exited, through the pidfd
        (waitid P_PIDFD, Linux 5.4 on): the one process it holds, never one given its number. Nothing when it
        has not exited, is not the caller's child, or the kernel cannot (the process stays a zombie)."""
        with self._using:
            if self.fd is not None:
                with suppress(OSError):
                    os.waitid(os.P_PIDFD, self.fd, os.WEXITED | os.WNOHANG)

    def use(self, read: Callable[[int], Result]) -> Result | None:
        """read(fd) under the lock close() waits for (a reading through the pidfd, never a signal); None once
        closed."""
        with self._using:
            return None if self.fd is None else read(self.fd)

    def close(self) -> None:
        """Close the pidfd once no other thread uses it; later signals send nothing."""
        with self._using:
            fd, self.fd = self.fd, None
            if fd is not None:
                os.close(fd)


def pidfd_support() -> str:
    """What this kernel offers Pidfd: signals to a group by pidfd (6.9 on), to a process only (5.3 on), or none."""
    try:
        fd = os.pidfd_open(os.getpid())
    except OSError:
        return "none: no pidfd (Linux before 5.3), so no signal is sent"
    try:  # signal 0 to this process's own group, if it leads one: nothing is sent either way
        signal.pidfd_send_signal(fd, 0, None, PIDFD_SIGNAL_PROCESS_GROUP)
    except ProcessLookupError:
        pass
    except OSError:
        return "pidfd; a group's members one by one (Linux before 6.9)"
    finally:
        os.close(fd)
    return "pidfd, groups through their leader's pidfd"


def _group_of(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[2])


def shutdown_child(
    proc: subprocess.Popen,
    exit_bound: float = 10.0,
    term_bound: float = 2.0,
    kill_bound: float = 2.0,
    on_output: Callable[[bytes], None] | None = None,
    pidfd: Pidfd | None = None,
) -> Shutdown:
    """Prevents L1 (a server that never exits on stdin EOF because its stdout is unread); the shutdown the host
    checks H1 (graceful close), H2 (EOF ignored) and H3 (SIGTERM ignored) expect (method.md, "Host checks").

    Closes stdin, then reads stdout until EOF (passing each chunk to on_output)
    while waiting at most exit_bound seconds for the process to exit by itself;
    then SIGTERM and term_bound more seconds of draining and waiting; then
    SIGKILL and kill_bound. Logs every escalation with the pid and returns
    which step ended the process. Signals go to the process only, through
    pidfd (default: one opened now, so proc must be the caller's own child,
    not yet waited for): a host that put the server in its own process group
    and wants the tree gone signals the group itself afterwards. stdout is
    read through its file descriptor, so bytes already held in proc.stdout's
    own buffer are not counted.
    """
    started = time.monotonic()
    held = pidfd if pidfd is not None or proc.poll() is not None else Pidfd.open(proc.pid)
    result = Shutdown(proc.pid, None, None, 0.0, 0, proc.stdout is None)
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except BrokenPipeError:  # unflushed bytes for a reader that is gone
            pass
    result.steps.append(("close stdin", 0.0))
    bounds: list[tuple[EndedBy, signal.Signals | None, float]] = [
        ("self", None, exit_bound),
        ("SIGTERM", signal.SIGTERM, term_bound),
        ("SIGKILL", signal.SIGKILL, kill_bound),
    ]
    for step, sig, bound in bounds:
        if sig is not None:
            log.warning("pid %d still alive after %.1f s: sending %s", proc.pid, time.monotonic() - started, step)
            if held is not None:
                held.signal(sig)
            result.steps.append((step, round(time.monotonic() - started, 3)))
        deadline = time.monotonic() + bound
        if not result.stdout_eof:
            _drain(proc, deadline, result, on_output)
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            continue
        result.ended_by = step
        break
    if held is not None and held is not pidfd:
        held.close()
    result.exit_code = proc.returncode
    result.elapsed_s = round(time.monotonic() - started, 3)
    result.steps.append(("exited" if result.ended_by else "alive", result.elapsed_s))
    if result.ended_by != "self":
        log.warning("pid %d: ended by %s after %.1f s", proc.pid, result.ended_by or "nothing", result.elapsed_s)
    return result


OutputSink = Callable[[bytes], None]


def _drain(proc: subprocess.Popen, deadline: float, result: Shutdown, on_output: OutputSink | None) -> None:
    """Read proc's stdout until EOF or the deadline; counts into result.

    A selector (poll/epoll), not select(2): select fails on an fd above 1023, and a host with many
    connections open has such fds.
    """
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                return
            chunk = os.read(fd, 65536)
            if not chunk:
                result.stdout_eof = True
                return
            result.stdout_bytes += len(chunk)
            if on_output is not None:
                on_output(chunk)


async def connect_or_close(
    group: ClientSessionGroup,
    server_params: ServerParameters,
    session_params: ClientSessionParameters | None = None,
) -> ClientSession:
    """Prevents L3 (a connect the group rejects leaves its transport and child running).

    Calls group.connect_to_server (session_params exist from 2.0 on; pass none to a 1.x group).
    When it raises, every session the group
    opened during the call but did not record (the rejected one: the caller
    was never given a handle) is passed to group.disconnect_from_server, which
    closes its transport; then the original exception is re-raised, with a
    note saying how many were closed. Finding that session reads the group's
    private _session_exit_stacks; on an SDK without it nothing is closed and the
    note says so. Do not run other connects on the same group concurrently.
    """
    opened_before = set(getattr(group, "_session_exit_stacks", {}))
    # 1.x's connect_to_server takes server_params alone: pass session_params only when there are some
    args = (server_params,) if session_params is None else (server_params, session_params)
    try:
        return await group.connect_to_server(*args)
    except Exception as exc:
        opened = getattr(group, "_session_exit_stacks", None)
        if opened is None:
            exc.add_note("host_contract: this SDK's group keeps no _session_exit_stacks; close the group to reclaim")
            raise
        recorded = set(group.sessions)
        orphans = [s for s in opened if s not in opened_before and s not in recorded]
        for orphan in orphans:
            await group.disconnect_from_server(orphan)
        log.warning("connect rejected (%s): closed %d transport(s) it had opened", exc, len(orphans))
        exc.add_note(f"host_contract: closed {len(orphans)} transport(s) the rejected connect opened")
        raise


async def disconnect_verified(group: ClientSessionGroup, session: ClientSession) -> list[str]:
    """Prevents L4 (tools of a re-registered session survive its disconnect).

    Calls group.disconnect_from_server, then verifies the tool table: every
    tool the group still routes to the disconnected session is a ghost, and is
    removed from group.tools and from the routing table. Returns the ghost
    names removed (empty when the SDK cleaned up itself). The routes are the
    group's private _tool_to_session; on an SDK without it no ghost is found,
    and the caller's own check of group.tools is what catches them.
    """
    await group.disconnect_from_server(session)
    routes = getattr(group, "_tool_to_session", {})
    ghosts = sorted(name for name, owner in routes.items() if owner is session)
    for name in ghosts:
        del routes[name]
        group.tools.pop(name, None)
    if ghosts:
        log.warning("disconnect left ghost tools %s; removed", ghosts)
    return ghosts


def sanitize_outbound(payload: Payload) -> Payload:
    """Prevents L2 and L7 (one lone-surrogate string kills the writer, server's or client's, and the session).

    Returns a copy of payload with every lone surrogate in every str (dict keys
    included, through dicts, lists and tuples) replaced by U+FFFD, so the SDK's
    model_dump_json() cannot fail on it. os.fsdecode() of a non-UTF-8 filename
    is the usual source: b"bad-\\xff-name" decodes to "bad-\\udcff-name".
    Other values pass through unchanged.
    """
    if isinstance(payload, str):
        return _LONE_SURROGATE.sub("\ufffd", payload)
    if isinstance(payload, dict):
        return {sanitize_outbound(k): sanitize_outbound(v) for k, v in payload.items()}
    if isinstance(payload, list):
        return [sanitize_outbound(v) for v in payload]
    if isinstance(payload, tuple):
        return tuple(sanitize_outbound(v) for v in payload)
    return payload


class ServerExited(Exception):
    """The server process of a connection exited while requests were in flight (fail_when_exits)."""

    def __init__(self, pid: int) -> None:
        super().__init__(f"MCP server process {pid} exited; its requests in flight were cancelled")
        self.pid = pid


def child_pids(parent: int | None = None) -> set[int]:
    """The live (not zombie) children of parent (default: this process), from /proc/*/stat."""
    parent = os.getpid() if parent is None else parent
    return {pid for pid, fields in _live_stats() if int(fields[1]) == parent}


def group_members(pgid: int) -> set[int]:
    """The live (not zombie) members of process group pgid, from /proc/*/stat."""
    return {pid for pid, fields in _live_stats() if int(fields[2]) == pgid}


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _live_stats() -> list[tuple[int, list[str]]]:
    """(pid, stat fields) of every live (not zombie) process."""
    stats = ((int(entry), _stat(int(entry))) for entry in os.listdir("/proc") if entry.isdigit())
    return [(pid, fields) for pid, fields in stats if fields is not None and fields[0] not in ("Z", "X")]


def spawned_server(before: set[int]) -> int:
    """The pid of the server that stdio_client has just started, which it does not expose (for L8's watch).

    before is child_pids() taken just before entering stdio_client; the server
    is the one new child of this process since (a shell's pid, when the
    command is sh -c '... exec server'). Raises LookupError unless there is
    exactly one. Start no other child process concurrently.
    """
    new = sorted(child_pids() - before)
    if len(new) != 1:
        raise LookupError(f"expected one new child process, found {new}")
    return new[0]


def process_exited(pid: int) -> bool:
    """Whether pid has exited: gone from /proc, or a zombie not yet reaped."""
    fields = _stat(pid)
    return fields is None or fields[0] in ("Z", "X")


@asynccontextmanager
async def fail_when_exits(pid: int, poll: float = 0.05) -> AsyncIterator[None]:
    """Prevents L8 (a request waits forever when the server died but a descendant still holds its stdout);
    host check H5 (method.md, "Host checks").

    stdio_client ends a session only at the server's stdout EOF, and a child
    the server left behind keeps that pipe open. Run the requests inside this
    block: once process pid has exited (looked at every poll seconds) the block
    is cancelled and ServerExited is raised, so every request in flight fails
    instead of waiting. A host with its own timeouts gets the same failure
    sooner. Take pid from spawned_server(). What the body raises comes out
    as it was raised (not in an ExceptionGroup).
    """
    import anyio  # not at module level: the probe's parent has no SDK

    exited = False
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal exited
                while not process_exited(pid):
                    await anyio.sleep(poll)
                exited = True
                log.warning("MCP server process %d exited: cancelling the requests in flight", pid)
                group.cancel_scope.cancel()

            group.start_soon(watch)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
    except BaseExceptionGroup as grouped:  # the task group wraps what the body raised: raise it as it was
        if len(grouped.exceptions) == 1:
            raise grouped.exceptions[0] from None
        raise
    if exited:
        raise ServerExited(pid)


async def run_connection(body: Callable[[], Awaitable[Result]]) -> Result:
    """Prevents L10 (a native asyncio cancel during stdio_client's shutdown hangs the host, server never signalled).

    asyncio.timeout() and task.cancel() cancel the task itself, and the
    CancelledError goes through anyio's shield around stdio_client's shutdown:
    the shutdown stops half-way and the task waits forever in the shielded
    drain of a server that ignores stdin EOF. body (the coroutine function that
    opens stdio_client and uses it) runs here in a task of its own, in an anyio
    task group: a native cancel of the caller lands on the group, which cancels
    the connection's task once, the anyio way, so its shutdown completes
    (stdin closed, the grace period, SIGTERM, SIGKILL) before the caller's
    cancellation goes on. Bounding body with anyio.fail_after inside it does
    the same without the native cancel.
    """
    import anyio  # not at module level: the probe's parent has no SDK

    results: list[Result] = []

    async def run() -> None:
        results.append(await body())

    async with anyio.create_task_group() as group:
        group.start_soon(run)
    return results[0]


@asynccontextmanager
async def end_server_group(
    transport: AbstractAsyncContextManager[Streams], term_bound: float = 2.0, kill_bound: float = 2.0
) -> AsyncIterator[Streams]:
    """Prevents L9 (the descendants of a server that exits by itself outlive it); host check H4 (method.md,
    "Host checks").

    stdio_client kills the server's process group only when the server is still alive
    PROCESS_TERMINATION_TIMEOUT after its stdin was closed: a server that exits promptly at
    EOF leaves its children running. Enter the transport through this block
    (`async with end_server_group(stdio_client(params)) as (read, write):`). It finds the
    server stdio_client started (spawned_server: start no other child meanwhile) and the
    server's process group; once the transport's context has exited, however it exits, it
    sends SIGTERM to what is left of that group, waits up to term_bound seconds for it to be
    gone, then SIGKILL and kill_bound more. An SDK that starts the server in a session of its
    own (mcp 1.11 on) gives it a group of its own, led by the server, and the group is
    signalled through its pidfd. An older SDK leaves the server in the host's group, which is never
    signalled: then the processes that joined the host's group while the connection was
    open (the host excepted) are signalled one by one, so start no other process in the
    host's group meanwhile. A group neither the server's nor the host's is left alone, with
    a warning. Every step it takes is logged with the pids.
    """
    import anyio  # not at module level: the probe's parent has no SDK

    before, own_group = child_pids(), os.getpgrp()
    own_before = group_members(own_group)
    server = group = held = None
    try:
        async with transport as streams:
            server = spawned_server(before)
            # held while it is still this process's child, its group read while it is not reaped: both then its own
            held = Pidfd.open(server, lambda pid: pid in child_pids())
            if held is not None and (read := _group_of(server)) is not None and held.signal(0):
                group = read
            yield streams
    finally:
        if group is None and server is not None:
            log.warning("MCP server %d was gone before its process group was read: nothing ended", server)
        elif group is not None:
            with anyio.CancelScope(shield=True):  # the leftovers go even when the caller is cancelled
                await _end_group(held, group, own_group, own_before, term_bound, kill_bound)
        if held is not None:
            held.close()


async def _end_group(
    server: Pidfd, group: int, own: int, own_before: set[int], term_bound: float, kill_bound: float
) -> None:
    """SIGTERM, then SIGKILL, to what is left of the server's group (see end_server_group)."""
    import anyio

    if group not in (server.pid, own):
        log.warning(
            "MCP server %d is in process group %d, neither its own nor the host's: left alone", server.pid, group
        )
        return

    def left() -> set[int]:
        if group != own:  # its number names its members only while some are left (signal 0 to them says so)
            return group_members(group) if server.signal_group(0) else set()
        return group_members(own) - own_before - {os.getpid()}

    def send(sig: signal.Signals, pids: set[int]) -> None:
        # the server's own group at once, by its pidfd (a member forking meanwhile cannot escape it); never the
        # host's own group: its new members one by one, each through a pidfd opened while it was in the group
        if group != own:
            server.signal_group(sig)
            return
        for pid in sorted(pids):
            if (member := Pidfd.open(pid, lambda p: _group_of(p) == own)) is not None:
                member.signal(sig)
                member.close()

    for sig, bound in ((signal.SIGTERM, term_bound), (signal.SIGKILL, kill_bound)):
        if not (pids := left()):
            return
        log.warning(
            "MCP server %d: its transport has exited; %s of its process group %d left: sending %s",
            server.pid,
            sorted(pids),
            group,
            sig.name,
        )
        send(sig, pids)
        deadline = time.monotonic() + bound
        while left() and time.monotonic() < deadline:
            await anyio.sleep(0.02)
    if pids := left():
        log.warning("MCP server %d: %s of its process group %d survived SIGKILL", server.pid, sorted(pids), group)


@contextmanager
def termination_grace(seconds: float) -> Iterator[None]:
    """Prevents L11 (a server's lifespan cleanup is skipped when a sync tool is still running at shutdown).

    stdio_client's shutdown closes the server's stdin, then waits
    mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT (2 s) for it to exit before
    SIGTERM to its group. A server finishing a sync tool (a worker thread no
    cancel can stop) exits only when the tool returns, and dies of that
    SIGTERM before its lifespan's cleanup runs. Inside this block the grace is
    at least seconds: choose it above the longest tool call the host lets run.
    The SDK reads the setting when a shutdown starts, so the block must
    enclose the exit of `async with stdio_client(...)`; it is process-wide (a
    module setting, the only way the SDK offers), so every shutdown in the
    block gets it, and it is restored on leaving. Raises LookupError on an SDK
    without the setting (early 1.x releases terminate the server at once).
    """
    import mcp.client.stdio as stdio  # not at module level: the probe's parent has no SDK

    if not hasattr(stdio, "PROCESS_TERMINATION_TIMEOUT"):
        raise LookupError("this SDK's stdio_client has no PROCESS_TERMINATION_TIMEOUT to raise")
    previous = stdio.PROCESS_TERMINATION_TIMEOUT
    stdio.PROCESS_TERMINATION_TIMEOUT = max(previous, seconds)
    try:
        yield
    finally:
        stdio.PROCESS_TERMINATION_TIMEOUT = previous

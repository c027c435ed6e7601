"""Throwaway SDK copies, each with one defect fixed by a small targeted patch.

The installed mcp package is copied and edited; the copy shadows the real one
through PYTHONPATH in the fixtures' interpreter. A probe that still reports a
case reproduced against its fix cannot fail, and is broken.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from stdio_probe.core.model import Sdk
from stdio_probe.sdk.sdk import pinned

# L1: write stdout without a thread (non-blocking fd, awaited in the event loop),
# and bound the writer once stdin reaches EOF: the server gives up on unsent
# output and exits by itself a couple of seconds after EOF.
FIX_L1 = {
    "server/stdio.py": [
        (
            "        async def stdin_reader():\n            try:\n                async with read_stream_writer:\n"
            "                    async for line in stdin:",
            "        writer_scope = anyio.CancelScope()\n\n"
            "        async def stdin_reader():\n            try:\n                async with read_stream_writer:\n"
            "                    async for line in stdin:",
        ),
        (
            "                        session_message = SessionMessage(message)\n"
            "                        await read_stream_writer.send(session_message)\n",
            "                        session_message = SessionMessage(message)\n"
            "                        await read_stream_writer.send(session_message)\n"
            "                writer_scope.deadline = anyio.current_time() + 2.0\n",
        ),
        (
            "                async with write_stream_reader:\n"
            "                    async for session_message in write_stream_reader:\n"
            "                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
            '                        await stdout.write(json + "\\n")\n'
            "                        await stdout.flush()\n",
            "                fd = stdout.wrapped.buffer.fileno()\n"
            "                os.set_blocking(fd, False)\n"
            "                with writer_scope:\n"
            "                  async with write_stream_reader:\n"
            "                    async for session_message in write_stream_reader:\n"
            "                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
            '                        data = (json + "\\n").encode()\n'
            "                        while data:\n"
            "                            try:\n"
            "                                data = data[os.write(fd, data):]\n"
            "                            except BlockingIOError:\n"
            "                                await anyio.wait_writable(fd)\n",
        ),
    ]
}

# L2: a message that cannot be serialised is dropped; the writer and the session live on.
FIX_L2 = {
    "server/stdio.py": [
        (
            "                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n",
            "                        try:\n"
            "                            json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
            "                        except ValueError:\n"
            "                            continue\n",
        )
    ]
}

# L3: a connect whose components are rejected closes the transport it opened.
FIX_L3 = {
    "client/session_group.py": [
        (
            "        return await self.connect_with_session(server_info, session)\n",
            "        try:\n"
            "            return await self.connect_with_session(server_info, session)\n"
            "        except Exception:\n"
            "            await self._session_exit_stacks.pop(session).aclose()\n"
            "            raise\n",
        )
    ]
}

# L4: re-registration extends the session's reverse index instead of overwriting it.
FIX_L4 = {
    "client/session_group.py": [
        (
            "        self._sessions[session] = component_names\n",
            "        previous = self._sessions.get(session)\n"
            "        if previous is not None:\n"
            "            component_names.prompts |= previous.prompts\n"
            "            component_names.resources |= previous.resources\n"
            "            component_names.tools |= previous.tools\n"
            "        self._sessions[session] = component_names\n",
        )
    ]
}

# L5: a decode error is surfaced to the session and ends its read stream at once;
# only then does the reader drain the rest of stdout.
FIX_L5 = {
    "client/stdio.py": [
        (
            "                finally:\n                    await _drain_stdout(process)\n",
            "                except UnicodeDecodeError as exc:\n"
            "                    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):\n"
            "                        await read_stream_writer.send(exc)\n"
            "                    await read_stream_writer.aclose()\n"
            "                finally:\n                    await _drain_stdout(process)\n",
        )
    ]
}

# L6: every new listen stream starts with a resync event for each list kind it honors
# (nothing is replayed: the event says "refetch"), so a host that re-lists on events
# re-lists after a reconnect without knowing it reconnected.
FIX_L6 = {
    "client/subscriptions.py": [
        (
            "        yield Subscription(route, request_id, route.honored, on_event)\n",
            "        if route.honored.tools_list_changed:\n"
            "            route.deliver(ToolsListChanged())\n"
            "        yield Subscription(route, request_id, route.honored, on_event)\n",
        )
    ]
}

# L7, in the transport: a message that cannot be serialised is not written; a request among them is
# answered at once with a JSON-RPC error, so that one request fails and the writer and session live on.
FIX_L7 = {
    "client/stdio.py": [
        (
            "                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n",
            "                    try:\n"
            "                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
            "                    except ValueError as exc:\n"
            '                        request_id = getattr(session_message.message, "id", None)\n'
            "                        if request_id is not None:\n"
            "                            error = types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc))\n"
            '                            reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)\n'
            "                            await read_stream_writer.send(SessionMessage(reply))\n"
            "                        continue\n",
        )
    ]
}

# L7, at the caller: send_request checks that the request can be encoded before it is queued, so the
# caller gets the error (UnicodeEncodeError) and nothing reaches the writer.
FIX_L7_AT_CALLER = {
    "client/session.py": [
        (
            "        # The stamp runs first, so its NAME_BEARING_METHODS rows win; a missing name fails loud.\n",
            "        json.dumps(data, ensure_ascii=False).encode()\n"
            "        # The stamp runs first, so its NAME_BEARING_METHODS rows win; a missing name fails loud.\n",
        )
    ]
}

def _fix_l8(on_exit: str) -> dict:
    """L8 fixed in stdio_client: a task watches the server's returncode and, once it is set, runs on_exit."""
    return {
        "client/stdio.py": [
            (
                "        tg.start_soon(stdin_writer)\n",
                "        tg.start_soon(stdin_writer)\n\n"
                "        async def watch_process() -> None:\n"
                "            while process.returncode is None:\n"
                "                await anyio.sleep(0.05)\n"
                f"            {on_exit}\n\n"
                "        tg.start_soon(watch_process)\n",
            )
        ]
    }


# L8, by the read stream: closing the session's read stream, so every pending request fails with
# "Connection closed".
FIX_L8 = _fix_l8("await read_stream_writer.aclose()")

# L8, by the pipe: the server's stdout stream is closed under the reader, which then ends
# (ClosedResourceError) as at EOF, closing the read stream.
FIX_L8_CLOSE_STDOUT = _fix_l8("await _close_pipe(process.stdout)")

# L10, in a task of its own: shutdown runs as a task of the transport's group, so a native cancel
# of the host reaches it only as the group's (anyio) cancellation, which its shield honours.
FIX_L10 = {
    "client/stdio.py": [
        (
            "            with anyio.CancelScope(shield=True):\n"
            "                await shutdown()\n"
            "            # Unstick pipe tasks a kill survivor's open pipe end could still block.\n"
            "            tg.cancel_scope.cancel()\n",
            "            async def shutdown_then_cancel() -> None:\n"
            "                with anyio.CancelScope(shield=True):\n"
            "                    await shutdown()\n"
            "                tg.cancel_scope.cancel()\n\n"
            "            tg.start_soon(shutdown_then_cancel)\n",
        )
    ]
}

# L10, by finishing the shutdown: a native CancelledError that gets through the shield is held while
# shutdown() runs again to the end, then raised.
FIX_L10_FINISH = {
    "client/stdio.py": [
        (
            "            with anyio.CancelScope(shield=True):\n                await shutdown()\n",
            "            with anyio.CancelScope(shield=True):\n"
            "                native_cancel = None\n"
            "                while True:\n"
            "                    try:\n"
            "                        await shutdown()\n"
            "                        break\n"
            '                    except __import__("asyncio").CancelledError as exc:\n'
            "                        native_cancel = exc\n"
            "            if native_cancel is not None:\n"
            "                tg.cancel_scope.cancel()\n"
            "                raise native_cancel\n",
        )
    ]
}

# Every signal a patched client sends its server's group, or the server alone, goes through a pidfd of the server
# opened at its spawn, while the server was the client's child not yet reaped (_signal_server): a timer or a helper
# that fires after the server was reaped reaches what is left of its group, or nothing; never a process that took
# its pid since, or a group that took its number (pidfd_send_signal's group flag, Linux 6.9, as the probe's own
# signals: host_contract.Pidfd). A kill by number there hit processes of other tests under the pid-reuse tests.
SERVER_PIDFD = [
    (
        "    # The spawn succeeded; no awaits until the task group is entered, or a\n",
        "    _SERVER_PIDFDS[process.pid] = os.pidfd_open(process.pid)\n"
        "    # The spawn succeeded; no awaits until the task group is entered, or a\n",
    ),
    (
        "def _parse_line(",
        "_SERVER_PIDFDS: dict[int, int] = {}  # a server's pid -> a pidfd of it, opened at its spawn\n\n\n"
        "def _signal_server(pid: int, group: bool = True, signum: int = 15) -> None:\n"
        "    with suppress(ProcessLookupError):  # nothing of it is left\n"
        '        __import__("signal").pidfd_send_signal(_SERVER_PIDFDS[pid], signum, None, 4 if group else 0)\n\n\n'
        "def _parse_line(",
    ),
]

# L9, after the exit: the group is SIGTERMed whether or not the server exited by itself within the grace period
# (through the server's pidfd where it exited; where it did not, _terminate_process_tree, SIGKILL after its timeout).
FIX_L9 = {
    "client/stdio.py": [
        *SERVER_PIDFD,
        (
            "    if not await _wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT):\n"
            "        await _terminate_process_tree(process)\n",
            "    exited = await _wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT)\n"
            "    if exited:\n"
            "        _signal_server(process.pid)\n"
            "    else:\n"
            "        await _terminate_process_tree(process)\n"
            "    if not exited:\n",
        ),
    ]
}

# L9, before the wait: SIGTERM to the server's whole group as soon as its stdin is closed, so the
# descendants go whether the server then exits by itself or not.
FIX_L9_BEFORE_WAIT = {
    "client/stdio.py": [
        *SERVER_PIDFD,
        ("    await _close_pipe(process.stdin)\n", "    await _close_pipe(process.stdin)\n    _signal_server(process.pid)\n"),
    ]
}

# L12, by a cancellable read: stdin_reader waits for stdin in the event loop (anyio.wait_readable on the
# non-blocking fd) and reads what is there, so no thread sleeps in read(2) and a SIGINT's cancellation ends it.
FIX_L12 = {
    "server/stdio.py": [
        (
            "@asynccontextmanager\nasync def stdio_server(",
            "async def _cancellable_lines(stdin):\n"
            "    fd = stdin.wrapped.buffer.fileno()\n"
            "    os.set_blocking(fd, False)\n"
            '    pending = b""\n'
            "    while True:\n"
            "        await anyio.wait_readable(fd)\n"
            "        try:\n"
            "            chunk = os.read(fd, 65536)\n"
            "        except BlockingIOError:\n"
            "            continue\n"
            "        if not chunk:\n"
            "            if pending:\n"
            '                yield pending.decode("utf-8", "replace")\n'
            "            return\n"
            '        *lines, pending = (pending + chunk).split(b"\\n")\n'
            "        for line in lines:\n"
            '            yield line.decode("utf-8", "replace") + "\\n"\n\n\n'
            "@asynccontextmanager\nasync def stdio_server(",
        ),
        (
            "                    async for line in stdin:\n",
            "                    async for line in _cancellable_lines(stdin):\n",
        ),
    ]
}

# L12, by SIGINT's default action: while it serves, the transport gives SIGINT back its default disposition,
# so the kernel ends the process whatever its threads are doing.
FIX_L12_DEFAULT_SIGINT = {
    "server/stdio.py": [
        (
            "    restore_stdin: Callable[[], None] | None = None\n",
            '    __import__("signal").signal(__import__("signal").SIGINT, __import__("signal").SIG_DFL)\n'
            "    restore_stdin: Callable[[], None] | None = None\n",
        )
    ]
}

# L11, by the client's grace: stdio_client waits 30 s (not 2) for the server to exit by itself after
# closing its stdin, so a server finishing a sync tool runs its lifespan cleanup before any signal.
FIX_L11 = {"client/stdio.py": [("PROCESS_TERMINATION_TIMEOUT = 2.0\n", "PROCESS_TERMINATION_TIMEOUT = 30.0\n")]}

# L11, in the server: a sync tool's worker thread is abandoned when its request is cancelled, so stdin
# EOF cancels it as it cancels an async tool, and the lifespan cleanup runs at once (the thread is left
# to finish on its own).
FIX_L11_ABANDON_THREAD = {
    "server/mcpserver/utilities/func_metadata.py": [
        (
            "        return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs))\n",
            "        return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs), abandon_on_cancel=True)\n",
        )
    ]
}

# L13, the tool's half: the tool runner turns SystemExit too (not only Exception) into an error result for the call.
FIX_L13_CATCH_EXIT = {
    "server/mcpserver/tools/base.py": [
        (
            "        except Exception as exc:\n            # A crash: the exception's own text stays on the server.\n",
            "        except (Exception, SystemExit) as exc:\n"
            "            # A crash: the exception's own text stays on the server.\n",
        )
    ]
}

# L13, the writer's half: an answer that cannot be serialised is replaced by a JSON-RPC error for its request's id
# (a message without an id is dropped), so that call fails and the writer and session live on.
FIX_L13_WRITER_ERROR = {
    "server/stdio.py": [
        (
            "                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n",
            "                        try:\n"
            "                            json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
            "                        except ValueError:\n"
            '                            request_id = getattr(session_message.message, "id", None)\n'
            "                            if request_id is None:\n"
            "                                continue\n"
            '                            error = types.ErrorData(code=types.INTERNAL_ERROR, message="unserialisable answer")\n'
            '                            reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)\n'
            "                            json = reply.model_dump_json(by_alias=True, exclude_unset=True)\n",
        )
    ]
}

# L13, by answering: both halves, so a call whose tool exits or whose answer cannot be serialised gets an error.
FIX_L13 = {**FIX_L13_CATCH_EXIT, **FIX_L13_WRITER_ERROR}


FIXES = {
    "L1": FIX_L1,
    "L2": FIX_L2,
    "L3": FIX_L3,
    "L4": FIX_L4,
    "L5": FIX_L5,
    "L6": FIX_L6,
    "L7": FIX_L7,
    "L8": FIX_L8,
    "L9": FIX_L9,
    "L10": FIX_L10,
    "L11": FIX_L11,
    "L12": FIX_L12,
    "L13": FIX_L13,
}

# More than one fix of the same defect: the probe must see each (the case id comes first, then the way).
OTHER_FIXES = {
    "L7-at-caller": FIX_L7_AT_CALLER,
    "L8-close-stdout": FIX_L8_CLOSE_STDOUT,
    "L9-before-wait": FIX_L9_BEFORE_WAIT,
    "L10-finish": FIX_L10_FINISH,
    "L11-abandon-thread": FIX_L11_ABANDON_THREAD,
    "L12-default-sigint": FIX_L12_DEFAULT_SIGINT,
    # L13 by ending: the fatal error's cancellation reaches a stdin read made in the event loop (FIX_L12), so no
    # thread holds the process in read(2): it exits, its stdout ends, and the host's call fails at that EOF
    "L13-exits": FIX_L12,
    # L13's halves alone: each answers one shape of the fatal error (tests/sdk/test_l13.py: the other stays reproduced)
    "L13-catch-exit": FIX_L13_CATCH_EXIT,
    "L13-writer-error": FIX_L13_WRITER_ERROR,
}

# L1 fixed in shapes the proof must not be blind to: at stdin EOF the server arms something that ends
# it EXIT_AFTER seconds later, from a source no thread's syscall shows. Each edit appends to stdin_reader,
# which runs in the event loop's thread once stdin reached EOF.
EXIT_AFTER = 2
_AFTER_STDIN_EOF = (
    "            except anyio.ClosedResourceError:  # pragma: no cover\n"
    "                await anyio.lowlevel.checkpoint()\n\n"
    "        async def stdout_writer():"
)


def _at_stdin_eof(code: str) -> dict[str, list[tuple[str, str]]]:
    body = "".join(f"            {line}\n" for line in code.strip().splitlines())
    head = _AFTER_STDIN_EOF.split("\n\n")[0]
    return {"server/stdio.py": [(_AFTER_STDIN_EOF, f"{head}\n{body}\n        async def stdout_writer():")]}


UNFORESEEN_L1_FIXES = {
    # a process-wide alarm (ITIMER_REAL) whose SIGALRM, default action, ends the process
    "alarm-default": _at_stdin_eof(
        f"""
import signal
signal.signal(signal.SIGALRM, signal.SIG_DFL)
signal.alarm({EXIT_AFTER})
"""
    ),
    # a POSIX timer (timer_create, CLOCK_MONOTONIC, SIGALRM with its default action)
    "posix-timer": _at_stdin_eof(
        f"""
import ctypes, signal
signal.signal(signal.SIGALRM, signal.SIG_DFL)
libc, timer = ctypes.CDLL(None), ctypes.c_void_p()
libc.timer_create(1, None, ctypes.byref(timer))
libc.timer_settime(timer, 0, (ctypes.c_long * 4)(0, 0, {EXIT_AFTER}, 0), None)
"""
    ),
    # an interval timer whose Python handler (run by the event loop) exits
    "itimer-handler": _at_stdin_eof(
        f"""
import asyncio, os, signal
asyncio.get_running_loop().add_signal_handler(signal.SIGALRM, os._exit, 0)
signal.setitimer(signal.ITIMER_REAL, {EXIT_AFTER})
"""
    ),
    # a socket the event loop watches, written by another process (a detached grandchild holding only the peer)
    "peer-wakeup": _at_stdin_eof(
        f"""
import os, select, socket
ours, theirs = socket.socketpair()
helper = os.fork()
if helper == 0:
    if os.fork() == 0:
        os.closerange(0, theirs.fileno())
        os.closerange(theirs.fileno() + 1, 4096)
        select.select([theirs], [], [], {EXIT_AFTER})  # returns at once if the server is gone
        try:
            theirs.send(b"x")
        except OSError:
            pass
    os._exit(0)
os.waitpid(helper, 0)
theirs.close()
await anyio.wait_readable(ours)
os._exit(0)
"""
    ),
}

# Fixes in shapes that only a fast method blind to some wake source, or a fork that drops state, would
# miss: each must read not_reproduced with both methods (tests/sdk/test_fix_shapes.py), the case id first.
_TIMER_AT_IMPORT = """import os
import sys
import threading

import ctypes as _ctypes
import signal as _signal
import time as _time

_EOF_AT = []


def _leave_after_eof(signum, frame):
    if _EOF_AT and _time.monotonic() - _EOF_AT[0] > 1.0:
        os._exit(0)


_signal.signal(_signal.SIGWINCH, _leave_after_eof)  # ignored by default: harmless once Python has reset it at exit
_TIMER, _EVENT = _ctypes.c_void_p(), (_ctypes.c_int * 16)(0, 0, _signal.SIGWINCH, 0)  # sigevent: SIGEV_SIGNAL
_ctypes.CDLL(None).timer_create(1, _EVENT, _ctypes.byref(_TIMER))
_ctypes.CDLL(None).timer_settime(_TIMER, 0, (_ctypes.c_long * 4)(1, 0, 1, 0), None)
"""

_STDIO_IMPORTS = "import os\nimport sys\nimport threading\n"
_SIGINT_AT_IMPORT = """import os
import signal as _signal
import sys
import threading

if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # a disposition the user chose is kept
    _signal.signal(_signal.SIGINT, lambda signum, frame: os._exit(130))
"""
_SIGINT_WATCHDOG = """import os
import select as _select
import signal as _signal
import sys
import threading
import time as _time

_SIGINT_AT: list[float] = []


def _watchdog() -> None:
    while True:
        _select.select([], [], [], 0.05)
        if _SIGINT_AT and _time.monotonic() - _SIGINT_AT[0] > 1.0:
            os._exit(130)


def _watch_sigint() -> None:
    previous = _signal.getsignal(_signal.SIGINT)

    def noted(signum, frame):
        _SIGINT_AT.append(_time.monotonic())
        if callable(previous):
            previous(signum, frame)

    _signal.signal(_signal.SIGINT, noted)
    threading.Thread(target=_watchdog, daemon=True).start()
"""
_SERVING = "    restore_stdin: Callable[[], None] | None = None\n"
# A wait on an armed timerfd through the event loop (loop.add_reader): the loop sleeps in epoll_wait with no
# timeout and wakes when the timerfd expires, which no thread's syscall argument shows; only the fd it watches
# (its fdinfo: it_value) does. The L8 and L10 shapes below put it before stdio_client's _parse_line.
_AFTER_TIMERFD = (
    "def _after_timerfd(seconds: float, callback) -> None:\n"
    "    import asyncio, ctypes\n\n"
    "    loop, libc = asyncio.get_running_loop(), ctypes.CDLL(None)\n"
    "    fd = libc.timerfd_create(1, os.O_NONBLOCK | os.O_CLOEXEC)  # CLOCK_MONOTONIC\n"
    "    libc.timerfd_settime(fd, 0, (ctypes.c_long * 4)(0, 0, int(seconds), int(seconds % 1 * 1e9)), None)\n\n"
    "    def fire() -> None:\n"
    "        loop.remove_reader(fd)\n"
    "        os.close(fd)\n"
    "        callback()\n\n"
    "    loop.add_reader(fd, fire)\n\n\n"
    "def _parse_line("
)

# the helper of "L1-unmarked-helper": a pidfd of the server (its pid the one argument), then a double fork and a
# session of its own; a second later, SIGKILL through the pidfd
_UNMARKED_HELPER = (
    "import os, signal, sys, time\n"
    "os.closerange(3, 65536)\n"
    "server = os.pidfd_open(int(sys.argv[1]))\n"
    "if os.fork():\n    os._exit(0)\n"
    "os.setsid()\n"
    "if os.fork():\n    os._exit(0)\n"
    "time.sleep(1)\n"
    "signal.pidfd_send_signal(server, signal.SIGKILL)\n"
)

UNFORESEEN_FIXES = {
    # state set at import that fork(2) drops: a repeating POSIX timer (SIGWINCH, a handler) armed when
    # mcp.server.stdio is imported; its handler ends the server once stdin has been at EOF for 1 s
    "L1-import-posix-timer": {
        "server/stdio.py": [
            (_STDIO_IMPORTS, _TIMER_AT_IMPORT),
            *_at_stdin_eof("_EOF_AT.append(_time.monotonic())")["server/stdio.py"],
        ]
    },
    # a subreaper client: mcp.client.stdio makes its process a child subreaper at import, so what a server
    # leaves in its session is re-parented to the client, which ends it once the server is gone
    "L9-subreaper-client": {
        "client/stdio.py": [
            (
                "logger = logging.getLogger(__name__)\n",
                "logger = logging.getLogger(__name__)\n"
                "__import__('ctypes').CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER\n",
            ),
            (
                "    # Reaps surviving Windows job members now, not at GC; no-op on POSIX.\n",
                "    for tid in os.listdir('/proc/self/task'):\n"
                "        for child in open(f'/proc/self/task/{tid}/children').read().split():\n"
                "            with suppress(OSError):\n"
                "                if os.getsid(int(child)) == process.pid:  # adopted from the server's session\n"
                "                    os.kill(int(child), 15)\n"
                "    # Reaps surviving Windows job members now, not at GC; no-op on POSIX.\n",
            ),
        ]
    },
    # a detached waker: at stdin EOF the server starts a process of its own session (its parent exits
    # at once) that sends it SIGUSR1 a second later, through a pidfd of the server it inherits (a server that has
    # exited by then is reached by nothing); the handler ends the server
    "L1-detached-waker": _at_stdin_eof(
        """
import signal, subprocess
signal.signal(signal.SIGUSR1, lambda signum, frame: os._exit(0))
_me = os.pidfd_open(os.getpid())
_wake = f"import signal; signal.pidfd_send_signal({_me}, signal.SIGUSR1)"
subprocess.run(
    ["/bin/sh", "-c", f"(sleep 1; exec {sys.executable} -I -S -c '{_wake}') <&- >&- 2>&- &"],
    start_new_session=True, check=True, pass_fds=(_me,),
)
"""
    ),
    # an unmarked helper: at stdin EOF the server posix_spawns a helper with an empty environment and no stdio of
    # the server's, which double-forks into a session of its own (re-parented away from the server) and SIGKILLs
    # the server through a pidfd 1 s later; no marker of the run on it, in its environment or command line
    "L1-unmarked-helper": _at_stdin_eof(
        f"""
helper = os.posix_spawn(
    sys.executable,
    [sys.executable, "-c", {_UNMARKED_HELPER!r}, str(os.getpid())],
    {{}},
    file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
)
os.waitpid(helper, 0)
"""
    ),
    # a delayed helper: as its shutdown starts, the client leaves a detached helper behind that SIGTERMs
    # the server's group 1.5 s later, whatever becomes of the shutdown itself (through the server's pidfd, which it
    # inherits)
    "L10-delayed-helper": {
        "client/stdio.py": [
            *SERVER_PIDFD,
            (
                "    await _close_pipe(process.stdin)\n",
                "    await _close_pipe(process.stdin)\n"
                "    _held = _SERVER_PIDFDS[process.pid]\n"
                "    _term = f'import signal; signal.pidfd_send_signal({_held}, signal.SIGTERM, None, 4)'\n"
                "    __import__('subprocess').run(\n"
                "        ['/bin/sh', '-c', f\"(sleep 1.5; exec {sys.executable} -I -S -c '{_term}') <&- >&- 2>&- &\"],\n"
                "        start_new_session=True, pass_fds=(_held,),\n"
                "    )\n",
            ),
        ]
    },
    # a handler set at import: mcp.server.stdio, once imported, ends the process with 130 on SIGINT (where SIGINT
    # still has Python's own handler, so asyncio.run then leaves it in place); undone by a fixture that resets
    # SIGINT after the import, kept by one started as from a shell (forked or exec'd)
    "L12-import-sigint-handler": {"server/stdio.py": [(_STDIO_IMPORTS, _SIGINT_AT_IMPORT)]},
    # a watchdog: while serving, a thread wakes every 50 ms (select with a timeout) and ends the process with 130
    # once a SIGINT (noted by a handler that then calls asyncio's) has not ended it within 1 s; the server is
    # never idle as a whole, only its stdin reader is
    "L12-watchdog-50ms": {
        "server/stdio.py": [(_STDIO_IMPORTS, _SIGINT_WATCHDOG), (_SERVING, "    _watch_sigint()\n" + _SERVING)]
    },
    # a late-closing stream: once the server has exited, the client closes its stdout stream 0.8 s later
    # (time for output a descendant might still send), which ends the reader as at EOF
    "L8-late-close": {
        "client/stdio.py": [
            (
                "        tg.start_soon(stdin_writer)\n",
                "        tg.start_soon(stdin_writer)\n\n"
                "        async def close_late() -> None:\n"
                "            while process.returncode is None:\n"
                "                await anyio.sleep(0.05)\n"
                "            await anyio.sleep(0.8)\n"
                "            await _close_pipe(process.stdout)\n\n"
                "        tg.start_soon(close_late)\n",
            )
        ]
    },
    # a grace on a timerfd: once process.wait() returns, the client waits 1 s on an armed timerfd in the event
    # loop (for output a descendant might still send), then closes the session's read stream: the call fails
    "L8-timerfd-grace": {
        "client/stdio.py": [
            (
                "        tg.start_soon(stdin_writer)\n",
                "        tg.start_soon(stdin_writer)\n\n"
                "        async def close_after_grace() -> None:\n"
                "            await process.wait()\n"
                '            fired = __import__("asyncio").get_running_loop().create_future()\n'
                "            _after_timerfd(1.0, lambda: fired.done() or fired.set_result(None))\n"
                "            await fired\n"
                "            await read_stream_writer.aclose()\n\n"
                "        tg.start_soon(close_after_grace)\n",
            ),
            ("def _parse_line(", _AFTER_TIMERFD),
        ]
    },
    # a SIGTERM on a timerfd: a native cancel that breaks through the shutdown's shield arms a timerfd for 1 s
    # in the event loop, whose expiry SIGTERMs the server's group; the cancel goes on, and the host returns
    # once the server is gone
    "L10-timerfd-sigterm": {
        "client/stdio.py": [
            (
                "            with anyio.CancelScope(shield=True):\n                await shutdown()\n",
                "            try:\n"
                "                with anyio.CancelScope(shield=True):\n"
                "                    await shutdown()\n"
                '            except __import__("asyncio").CancelledError:\n'
                "                _after_timerfd(1.0, lambda: _signal_server(process.pid))\n"
                "                raise\n",
            ),
            ("def _parse_line(", _AFTER_TIMERFD),
            *SERVER_PIDFD,
        ]
    },
}


def _delayed(fix: dict[str, list[tuple[str, str]]], after: str, indent: str) -> dict[str, list[tuple[str, str]]]:
    """fix, its one edit with a 3 s sleep (at indent) after the line after: the same fix, 3 s late."""
    [(relative, [(old, new)])] = fix.items()
    assert new.count(after) == 1
    return {relative: [(old, new.replace(after, f"{after}{indent}await anyio.sleep(3)\n"))]}


# Fixes that take effect only after more than the 2 s a caller's bound once gave the fast method (L5, L7):
# each must read not_reproduced with both methods, the stock SDK reproduced with both (tests/sdk/test_fix_shapes.py).
LATE_FIXES = {
    # a late error: the reader holds a decode error for 3 s (a grace for a server's late output), then
    # surfaces it to the session and closes the read stream (FIX_L5), so the pending request fails
    "L5-late-error": _delayed(FIX_L5, "                except UnicodeDecodeError as exc:\n", "                    "),
    # a writer that backs off: a request it cannot serialise is answered with a JSON-RPC error at once (FIX_L7),
    # then the writer pauses 3 s before it takes the next message, so the call after it is answered 3 s late
    "L7-writer-backoff": _delayed(
        FIX_L7,
        "                            await read_stream_writer.send(SessionMessage(reply))\n",
        "                        ",
    ),
}

# L11 on SDKs whose client grace differs (tests/sdk/test_fix_shapes.py): each L11 verdict must be the same with both
# methods; the fast method's 2.5 s sync tool ends inside a grace longer than that, so its arm must run again.
GRACE_SHAPES = {
    # not a fix: the client waits 3 s, not 2, before its SIGTERM; a sync tool longer than 3 s still loses its cleanup
    "L11-grace-3s": (
        {"client/stdio.py": [("PROCESS_TERMINATION_TIMEOUT = 2.0\n", "PROCESS_TERMINATION_TIMEOUT = 3.0\n")]},
        "reproduced",
    ),
    # a fix: after closing its stdin the client waits for the server's exit without a bound (no signal), so a
    # server finishing a sync tool of any length runs its lifespan cleanup
    "L11-unbounded-wait": (
        {
            "client/stdio.py": [
                (
                    "    if not await _wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT):\n",
                    '    if not await _wait_for_process_exit(process, float("inf")):\n',
                )
            ]
        },
        "not_reproduced",
    ),
}

# L5 fixed by its default alone: a client that decodes with "replace" unless told otherwise. A bug arm
# that forced "strict" would still call this release reproduced.
L5_REPLACE_DEFAULT = {
    "client/stdio.py": [
        (
            '    encoding_error_handler: Literal["strict", "ignore", "replace"] = "strict"\n',
            '    encoding_error_handler: Literal["strict", "ignore", "replace"] = "replace"\n',
        )
    ]
}

# Not a fix: an SDK generation without caller-owned sessions in the group (what L4 probes).
WITHOUT_CONNECT_WITH_SESSION = {
    "client/session_group.py": [
        ("    async def connect_with_session(\n", "    async def _removed_connect_with_session(\n"),
        (
            "        return await self.connect_with_session(server_info, session)\n",
            "        return await self._removed_connect_with_session(server_info, session)\n",
        ),
    ]
}


def patched_sdk(root: Path, name: str, edits: dict[str, list[tuple[str, str]]], base: Sdk) -> Sdk:
    """A copy of base's mcp package with edits applied (file -> [(old, new)]), as an Sdk."""
    source = Path(base.facts["mcp_path"]).parent
    target = root / name
    shutil.copytree(source, target / "mcp", ignore=shutil.ignore_patterns("__pycache__"))
    for relative, replacements in edits.items():
        path = target / "mcp" / relative
        text = path.read_text()
        for old, new in replacements:
            assert text.count(old) == 1, f"{name} no longer applies to {relative}"
            text = text.replace(old, new)
        path.write_text(text)
    sdk = pinned(env={"PYTHONPATH": str(target)}, spec=f"{base.facts['version']}+{name}")
    assert sdk.facts["mcp_path"].startswith(str(target)), "the patched copy does not shadow the installed mcp"
    return sdk


# Broken SDKs, for the probe's own fault handling: each breaks an arm in a way no case expects,
# or removes what a case probes.
BREAKS = {
    # a Client without listen(), as in SDKs before subscriptions/listen: L6 is not_applicable
    "without-listen": {"client/client.py": [("    def listen(\n", "    def _listen_removed(\n")]},
    # an SDK without a high-level server API (neither MCPServer nor FastMCP): the server-API pairs are not_applicable
    "without-server-api": {
        "server/__init__.py": [("from .mcpserver import MCPServer\n", "")],
        "server/mcpserver/__init__.py": [
            ("from .server import MCPServer, require_client_extension", "from .server import require_client_extension")
        ],
        # the client names MCPServer only to unwrap one: a stand-in keeps `import mcp` working
        **{
            module: [("from mcp.server.mcpserver import MCPServer\n", 'MCPServer = type("MCPServer", (), {})\n')]
            for module in ("client/_memory.py", "client/client.py")
        },
    },
    # a ClientSession without call_tool, as a release before tools would be: L7 and L8 are not_applicable
    "without-call-tool": {
        "__init__.py": [
            (
                "from .client.session import ClientSession\n",
                "from .client.session import ClientSession\n\ndel ClientSession.call_tool\n",
            )
        ]
    },
    # a client module that hangs at import: the driver never reaches a checkpoint
    "hang-client": {"client/session_group.py": [('"""SessionGroup', 'import time\ntime.sleep(600)\n"""SessionGroup')]},
    # a server writer that prints garbage in place of every message
    "garbage-server": {"server/stdio.py": [('await stdout.write(json + "\\n")', 'await stdout.write("not json\\n")')]},
    # a server transport that dies at import: the fixture exits before serving anything
    "crash-server": {
        "server/stdio.py": [('"""Stdio server transport', 'raise SystemExit(3)\n"""Stdio server transport')]
    },
}


# A third round of shapes (tests/sdk/test_fix_shapes.py, FRESH_SHAPES), one or more for every case, in mechanisms the
# shapes above do not use; each with the verdict both methods must give: not_reproduced for a fix, reproduced for a
# shape that looks like one and leaves the defect in place. Each was checked by hand first (docs/measurements.md).
_CLIENT_WRITE = "                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)\n"
_CLIENT_DRAIN = "                finally:\n                    await _drain_stdout(process)\n"
_CLIENT_TASKS = "        tg.start_soon(stdin_writer)\n"
_CLIENT_SHIELD = "            with anyio.CancelScope(shield=True):\n                await shutdown()\n"
_CLIENT_GRACE = "    if not await _wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT):\n"
_CLIENT_AFTER_STOP = "    # Reaps surviving Windows job members now, not at GC; no-op on POSIX.\n"
_SERVER_YIELD = "            yield read_stream, write_stream\n    finally:\n"


def _before_parse_line(code: str) -> tuple[str, str]:
    """An edit of mcp/client/stdio.py that puts module-level code (a helper) before _parse_line."""
    return ("def _parse_line(", f"{code.strip()}\n\n\ndef _parse_line(")


FRESH_SHAPES: dict[str, tuple[dict[str, list[tuple[str, str]]], str]] = {
    # an armed timerfd in the server's event loop: at stdin EOF the server arms one for 1 s (loop.add_reader), whose
    # expiry exits; its writer thread stays in write(2) on the full pipe meanwhile, the loop in epoll_wait
    "L1-timerfd-exit": (
        _at_stdin_eof(
            """
import asyncio, ctypes
_fd = ctypes.CDLL(None).timerfd_create(1, os.O_NONBLOCK | os.O_CLOEXEC)
ctypes.CDLL(None).timerfd_settime(_fd, 0, (ctypes.c_long * 4)(0, 0, 1, 0), None)
asyncio.get_running_loop().add_reader(_fd, os._exit, 0)
"""
        ),
        "not_reproduced",
    ),
    # not a fix: at stdin EOF another thread closes the fd the writer thread is blocked writing to; a write(2) in
    # progress holds its file, so the thread stays blocked on the full pipe and the server never exits
    "L1-close-from-thread": (
        _at_stdin_eof(
            """
threading.Timer(0.5, os.close, (stdout.wrapped.buffer.fileno(),)).start()
"""
        ),
        "reproduced",
    ),
    # a writer that escapes: a message pydantic cannot serialise is written as json.dumps of its python dump, which
    # escapes the lone surrogate (\\udcff) as ASCII, so the writer and the session live on (the SDK's own client
    # cannot parse that escape, so that one answer is lost to it: the call after it is answered)
    "L2-ascii-escape": (
        {
            "server/stdio.py": [
                (
                    "                        json = session_message.message.model_dump_json("
                    "by_alias=True, exclude_unset=True)\n",
                    "                        try:\n"
                    "                            json = session_message.message.model_dump_json("
                    "by_alias=True, exclude_unset=True)\n"
                    "                        except ValueError:\n"
                    '                            json = __import__("json").dumps(\n'
                    "                                session_message.message.model_dump(by_alias=True, exclude_unset=True),"
                    " default=str\n"
                    "                            )\n",
                )
            ]
        },
        "not_reproduced",
    ),
    # a guard stack: the rejected connect's own exit stack is closed by a guard that a successful aggregation
    # disarms (pop_all)
    "L3-guard-stack": (
        {
            "client/session_group.py": [
                (
                    "        return await self.connect_with_session(server_info, session)\n",
                    "        async with contextlib.AsyncExitStack() as guard:\n"
                    "            guard.push_async_callback(lambda: self._session_exit_stacks.pop(session).aclose())\n"
                    "            await self.connect_with_session(server_info, session)\n"
                    "            guard.pop_all()\n"
                    "        return session\n",
                )
            ]
        },
        "not_reproduced",
    ),
    # a disconnect by owner: every tool the group routes to the session goes, whatever its reverse index holds
    "L4-by-owner": (
        {
            "client/session_group.py": [
                (
                    "        # Clean up the session's resources via its dedicated exit stack\n",
                    "        for name in [n for n, owner in self._tool_to_session.items() if owner is session]:\n"
                    "            self._tools.pop(name, None)\n"
                    "            del self._tool_to_session[name]\n\n"
                    "        # Clean up the session's resources via its dedicated exit stack\n",
                )
            ]
        },
        "not_reproduced",
    ),
    # a threading.Timer: a decode error makes a timer thread close the session's read stream 1 s later (through
    # call_soon_threadsafe), so the pending request fails while the reader drains
    "L5-timer-thread": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_DRAIN,
                    "                except UnicodeDecodeError:\n"
                    '                    __import__("threading").Timer(\n'
                    '                        1.0, __import__("asyncio").get_running_loop().call_soon_threadsafe,'
                    " (read_stream_writer.close,)\n"
                    "                    ).start()\n" + _CLIENT_DRAIN,
                )
            ]
        },
        "not_reproduced",
    ),
    # a resync by loop.call_later: 0.3 s after a listen is acknowledged the stream gets a tools-changed event (a
    # "refetch", nothing replayed), so a host that re-lists on events re-lists after a reconnect
    "L6-call-later-resync": (
        {
            "client/subscriptions.py": [
                (
                    "        yield Subscription(route, request_id, route.honored, on_event)\n",
                    "        if route.honored.tools_list_changed:\n"
                    '            __import__("asyncio").get_running_loop().call_later(0.3, route.deliver,'
                    " ToolsListChanged())\n"
                    "        yield Subscription(route, request_id, route.honored, on_event)\n",
                )
            ]
        },
        "not_reproduced",
    ),
    # a scrubbing writer: a request pydantic cannot serialise is sent with its lone surrogates replaced, so every
    # call is answered and the session lives on
    "L7-scrub": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_WRITE,
                    "                    try:\n"
                    "    " + _CLIENT_WRITE + "                    except ValueError:\n"
                    "                        dump = session_message.message.model_dump(by_alias=True, exclude_unset=True)\n"
                    '                        json = __import__("json").dumps(_scrub(dump), default=str)\n',
                ),
                _before_parse_line(
                    """
def _scrub(value):
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value
"""
                ),
            ]
        },
        "not_reproduced",
    ),
    # SIGALRM by setitimer: once the server has exited, the client arms ITIMER_REAL for 1 s, its SIGALRM handled
    # by the event loop (add_signal_handler: set_wakeup_fd), which closes the session's read stream; disarmed when the task ends
    "L8-itimer-close": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_TASKS,
                    _CLIENT_TASKS + "\n"
                    "        async def close_on_alarm() -> None:\n"
                    "            while process.returncode is None:\n"
                    "                await anyio.sleep(0.05)\n"
                    '            signal = __import__("signal")\n'
                    '            __import__("asyncio").get_running_loop().add_signal_handler(signal.SIGALRM,'
                    " read_stream_writer.close)\n"
                    "            signal.setitimer(signal.ITIMER_REAL, 1.0)\n"
                    "            try:\n"
                    "                await anyio.sleep_forever()\n"
                    "            finally:  # the loop's handler goes with the loop: an armed timer would kill the client\n"
                    "                signal.setitimer(signal.ITIMER_REAL, 0)\n\n"
                    "        tg.start_soon(close_on_alarm)\n",
                )
            ]
        },
        "not_reproduced",
    ),
    # a threading.Timer: once the server is stopped, a timer thread SIGTERMs its group 1 s later, so what it left
    # there goes whether it exited by itself or not
    "L9-timer-group": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_AFTER_STOP,
                    '    __import__("threading").Timer(1.0, _signal_server, (process.pid,)).start()\n'
                    + _CLIENT_AFTER_STOP,
                ),
                *SERVER_PIDFD,
            ]
        },
        "not_reproduced",
    ),
    # not a fix: the same timer SIGTERMs the server alone (not its group), which has already exited: nothing is
    # reached
    "L9-timer-server-only": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_AFTER_STOP,
                    '    __import__("threading").Timer(1.0, _signal_server, (process.pid, False)).start()\n'
                    + _CLIENT_AFTER_STOP,
                ),
                *SERVER_PIDFD,
            ]
        },
        "reproduced",
    ),
    # a watchdog thread with a short period: a native cancel through the shutdown's shield starts a thread that
    # wakes every 50 ms (select with a timeout) and SIGTERMs the server's group 1 s later
    "L10-watchdog-thread": (
        {
            "client/stdio.py": [
                (
                    _CLIENT_SHIELD,
                    "            try:\n"
                    "                with anyio.CancelScope(shield=True):\n"
                    "                    await shutdown()\n"
                    '            except __import__("asyncio").CancelledError:\n'
                    '                __import__("threading").Thread(target=_watchdog, args=(process.pid,),'
                    " daemon=True).start()\n"
                    "                raise\n",
                ),
                _before_parse_line(
                    """
def _watchdog(pgid: int) -> None:
    import select, signal, time

    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        select.select([], [], [], 0.05)
    _signal_server(pgid)
"""
                ),
                *SERVER_PIDFD,
            ]
        },
        "not_reproduced",
    ),
    # SIGALRM by setitimer, read from a signalfd: mcp.client.stdio blocks SIGALRM at import (threads started later
    # inherit the mask); a native cancel through the shutdown's shield arms ITIMER_REAL for 1 s, whose SIGALRM stays
    # pending and makes a signalfd the event loop watches readable; its reader SIGTERMs the server's group. No handler
    # (SigCgt), no timer in /proc: only the blocked mask says a SIGALRM could wake the loop
    "L10-signalfd-alarm": (
        {
            "client/stdio.py": [
                (
                    "logger = logging.getLogger(__name__)\n",
                    "logger = logging.getLogger(__name__)\n"
                    '__import__("signal").pthread_sigmask(__import__("signal").SIG_BLOCK, {__import__("signal").SIGALRM})\n',
                ),
                (
                    _CLIENT_SHIELD,
                    "            try:\n"
                    "                with anyio.CancelScope(shield=True):\n"
                    "                    await shutdown()\n"
                    '            except __import__("asyncio").CancelledError:\n'
                    "                _alarm_then_terminate(process.pid)\n"
                    "                raise\n",
                ),
                _before_parse_line(
                    """
def _alarm_then_terminate(pgid: int) -> None:
    import asyncio, ctypes, signal

    mask = (ctypes.c_ulong * 16)(1 << (signal.SIGALRM - 1))
    fd = ctypes.CDLL(None).signalfd(-1, mask, os.O_NONBLOCK | os.O_CLOEXEC)
    loop = asyncio.get_running_loop()

    def alarmed() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        _signal_server(pgid)

    loop.add_reader(fd, alarmed)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
"""
                ),
                *SERVER_PIDFD,
            ]
        },
        "not_reproduced",
    ),
    # a pidfd grace: after closing stdin the client waits for the server's exit on a pidfd (anyio.wait_readable),
    # bounded at 30 s by anyio.move_on_after, so a server finishing a sync tool runs its lifespan cleanup
    "L11-pidfd-grace": (
        {
            "client/stdio.py": [
                (_CLIENT_GRACE, "    if not await _wait_on_pidfd(process, 30.0):\n"),
                _before_parse_line(
                    """
async def _wait_on_pidfd(process, bound: float) -> bool:
    try:
        fd = os.pidfd_open(process.pid)
    except ProcessLookupError:
        return await _wait_for_process_exit(process, _KILL_REAP_TIMEOUT)
    try:
        with anyio.move_on_after(bound):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)
    return await _wait_for_process_exit(process, _KILL_REAP_TIMEOUT)
"""
                ),
            ]
        },
        "not_reproduced",
    ),
    # SIGALRM by setitimer: while serving, a SIGINT (passed on to asyncio's handler) also arms ITIMER_REAL for 1 s,
    # whose SIGALRM handler exits with 130
    "L12-itimer-exit": (
        {
            "server/stdio.py": [
                (
                    _SERVING,
                    "    _signal = __import__('signal')\n"
                    "    _previous = _signal.getsignal(_signal.SIGINT)\n\n"
                    "    def _arm_exit(signum, frame):\n"
                    "        _signal.signal(_signal.SIGALRM, lambda *_: os._exit(130))\n"
                    "        _signal.setitimer(_signal.ITIMER_REAL, 1.0)\n"
                    "        if callable(_previous):\n"
                    "            _previous(signum, frame)\n\n"
                    "    _signal.signal(_signal.SIGINT, _arm_exit)\n" + _SERVING,
                )
            ]
        },
        "not_reproduced",
    ),
    # a threading.Timer: whatever ends the session with an exception (a tool's SystemExit, a writer that dies)
    # starts a timer that ends the process 1 s later, so the host's call fails at the EOF of its stdout
    "L13-timer-exit": (
        {
            "server/stdio.py": [
                (
                    _SERVER_YIELD,
                    "            try:\n"
                    "                yield read_stream, write_stream\n"
                    "            except BaseException:\n"
                    "                threading.Timer(1.0, os._exit, (1,)).start()\n"
                    "                raise\n"
                    "    finally:\n",
                )
            ]
        },
        "not_reproduced",
    ),
}

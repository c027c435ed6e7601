"""A fixture forked from the fork server starts and ends as an exec'd one does: real processes, no stand-ins."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from stdio_probe.core import sample, spawn
from stdio_probe.core.forkserver import SHIM_SOCKET_ENV, ForkServer, ForkServerUnavailable
from stdio_probe.fixtures.fork_server import ORPHAN_BOUND
from tests.bounded import read_line, read_to_eof

SPAWN_ID = "5" * 32  # a spawn marker's value, as spawn gives one

REPORT = textwrap.dedent(
    """
    import json, os, signal, sys
    fds = sorted(int(name) for name in os.listdir("/proc/self/fd"))
    print(json.dumps({
        "fds": fds,
        "inheritable": {fd: os.get_inheritable(fd) for fd in fds if fd > 2 and os.path.exists(f"/proc/self/fd/{fd}")},
        "argv": sys.argv[1:],
        "path0": sys.path[0],
        "name": __name__,
        "main": [sys.modules["__main__"].__dict__ is globals(), __package__, __spec__, type(__loader__).__name__],
        "own_session": os.getsid(0) == os.getpid(),
        "handlers": {name: str(signal.getsignal(getattr(signal, name))) for name in ("SIGCHLD", "SIGTERM", "SIGINT")},
        "marker": os.environ.get("PROBE_RUN_ID"),
        "spawn_marker": [e.decode() for e in open("/proc/self/environ", "rb").read().split(b"\\0") if b"SPAWN_ID" in e],
        "streams": {
            name: [type(getattr(sys, name).buffer).__name__, getattr(sys, name).seekable(), getattr(sys, name).isatty()]
            for name in ("stdin", "stdout", "stderr")
        },
    }))
    """
)


@pytest.fixture
def server(supervisor):
    env = {**spawn.child_env({}), spawn.SPAWN_MARKER: spawn.SPAWN_PLACEHOLDER}
    fork_server = ForkServer([sys.executable], spawn.FIXTURES / "fork_server.py", env, supervisor.run_folder())
    yield fork_server
    fork_server.close(spawn.TERM_GRACE)


def _forked(server, script, args, pass_fds=()):
    with tempfile.TemporaryFile() as stderr:
        process = server.fork(script, args, stderr.fileno(), pass_fds, SPAWN_ID)
        process.stdin.close()
        out = read_to_eof(process.stdout)
        code = process.wait(10)
        stderr.seek(0)
        return code, out, stderr.read().decode()


def test_forked_fixture_sees_what_an_execd_one_sees(server, tmp_path):
    script = tmp_path / "report.py"
    script.write_text(REPORT)
    read_fd, write_fd = os.pipe()
    try:
        args = ["--report-fd", str(write_fd)]
        code, forked, _ = _forked(server, script, args, (write_fd,))
        execd_code, execd, _ = _execd(script, args, (write_fd,))
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert code == execd_code == 0
    assert json.loads(forked) == json.loads(execd)


def _execd(script, args, pass_fds=()):
    """The script exec'd with what spawn gives every fixture (stdin and stdout pipes, stderr a file)."""
    with tempfile.TemporaryFile() as stderr:
        done = subprocess.run(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**spawn.child_env({}), spawn.SPAWN_MARKER: SPAWN_ID},
            start_new_session=True,
            pass_fds=pass_fds,
            timeout=10,
        )
        stderr.seek(0)
        return done.returncode, done.stdout, stderr.read().decode()


FLUSH_FAILS = """
import io, sys
class Full(io.StringIO):
    def flush(self):
        raise OSError("no room")
sys.stdout = Full()
"""
STDIN_LOCK_HELD = """
import os, sys, threading, time
reader, writer = os.pipe()
os.dup2(reader, 0)  # stdin that never ends: the thread below holds its lock until the process dies
threading.Thread(target=sys.stdin.buffer.readline, daemon=True).start()
time.sleep(0.2)
"""
CYCLE_WITH_FINALIZER = """
class Node:
    def __del__(self):
        import sys
        sys.stderr.write("finalized;")
node = Node()
node.self = node
del node
"""


@pytest.mark.parametrize(
    ("body", "returncode", "stderr_has"),
    [
        ("raise SystemExit(3)", 3, ""),
        ("raise SystemExit('bye')", 1, "bye"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM, ""),
        ("raise ValueError('boom')", 1, "ValueError: boom"),
        ("raise KeyboardInterrupt", -signal.SIGINT, "KeyboardInterrupt"),
        (
            "import atexit, sys, threading, time\n"
            "atexit.register(lambda: sys.stderr.write('atexit;'))\n"
            "threading.Thread(target=lambda: (time.sleep(0.3), sys.stderr.write('joined;'))).start()",
            0,
            "joined;atexit;",
        ),
        (FLUSH_FAILS, 120, "OSError: no room"),
        (CYCLE_WITH_FINALIZER, 0, "finalized;"),
        (STDIN_LOCK_HELD, -signal.SIGABRT, "could not acquire lock for <_io.BufferedReader name='<stdin>'>"),
    ],
    ids=[
        "exit-code",
        "exit-message",
        "signal",
        "uncaught",
        "interrupt",
        "threads-then-atexit",
        "flush-fails",
        "gc",
        "daemon-holds-stdin",
    ],
)
def test_forked_fixture_ends_as_an_execd_one(server, tmp_path, body, returncode, stderr_has):
    """The child's end (run_and_exit: CPython's exit, less the teardown of modules) gives the returncode
    and the stderr an exec'd interpreter gives."""
    script = tmp_path / "end.py"
    script.write_text(body + "\n")
    for code, _, stderr in (_forked(server, script, []), _execd(script, [])):
        assert code == returncode, stderr
        assert stderr_has in stderr


def test_fork_server_whose_probe_is_gone_ends_its_children_and_reports_them(server):
    """The control socket closing (the probe done, or killed) bounds how long a stuck fixture outlives it."""
    with tempfile.TemporaryFile() as stderr:
        script = spawn.FIXTURES / "fixture_stubborn.py"
        process = server.fork(script, ["--ignore-sigterm"], stderr.fileno(), (), SPAWN_ID)
    assert read_line(process.stdout) == b"ready\n"
    server._control.close()
    assert process.wait(ORPHAN_BOUND + 5) == -signal.SIGKILL
    assert server.process.wait(5) == 0


SHIMMED = textwrap.dedent(
    """
    import json, os, signal, sys, time
    # os.write, not print: the signal may come while the print below still holds stdout's lock
    signal.signal(signal.SIGTERM, lambda *_: (os.write(1, b"term\\n"), sys.exit(7)))
    print(json.dumps({"pid": os.getpid(), "marker": os.environ.get("SHIM_TEST"), "argv": sys.argv[1:]}), flush=True)
    line = sys.stdin.readline()
    print("eof" if not line else line.strip(), flush=True)
    if sys.argv[1:] == ["wait"]:
        time.sleep(60)
    """
)


def _shimmed(server, tmp_path, *args):
    """The script started through fork_shim.py as the SDK's stdio_client starts a server: pipes, own session."""
    script = tmp_path / "shimmed.py"
    script.write_text(SHIMMED)
    deadline = time.monotonic() + 30  # the server binds it as it starts; every fork comes after that
    while not os.path.exists(server.shim_socket) and time.monotonic() < deadline:
        time.sleep(0.01)
    env = {SHIM_SOCKET_ENV: server.shim_socket, "SHIM_TEST": "from the shim"}
    shim = subprocess.Popen(
        [sys.executable, "-I", "-S", str(spawn.FIXTURES / "fork_shim.py"), str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    started = json.loads(read_line(shim.stdout))
    return shim, started


def test_shimmed_server_is_forked_on_the_shims_pipes_with_its_environment(server, tmp_path):
    shim, started = _shimmed(server, tmp_path, "echo")
    assert started["marker"] == "from the shim" and started["argv"] == ["echo"]
    assert started["pid"] != shim.pid and os.getsid(started["pid"]) == started["pid"]
    shim.stdin.write(b"hello\n")
    shim.stdin.flush()
    assert read_line(shim.stdout) == b"hello\n"
    shim.stdin.close()  # the server's EOF: the shim holds no copy of the pipe
    assert read_to_eof(shim.stdout) == b""
    assert shim.wait(10) == 0


def test_shim_relays_a_signal_and_ends_as_its_server_did(server, tmp_path):
    shim, started = _shimmed(server, tmp_path, "wait")
    os.killpg(shim.pid, signal.SIGTERM)  # as the SDK signals the server's group
    assert read_line(shim.stdout) == b"term\n"
    assert shim.wait(10) == 7
    shim.stdin.close()


def test_a_shim_killed_takes_its_server_with_it(server, tmp_path):
    """SIGKILL cannot be relayed: the fork server ends the server's group when its shim dies first."""
    shim, started = _shimmed(server, tmp_path, "wait")
    os.killpg(shim.pid, signal.SIGKILL)
    assert shim.wait(10) == -signal.SIGKILL
    deadline = time.monotonic() + 60  # a safety net: the server's end ends the wait (a loaded machine is slow to it)
    while sample.is_live(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not sample.is_live(started["pid"])
    shim.stdin.close()


def test_fork_servers_start_ahead_and_close_after_their_last_arm(supervisor):
    """Three interpreters (one python, three environments), two arms each, one ahead: a server runs from
    the first arm before its own to its own last arm, and no longer; a fixture of a closed one is exec'd."""
    interpreters = [(sys.executable, {"PROBE_TEST_SDK": str(n)}) for n in range(3)]
    servers = spawn.ForkServers(supervisor, interpreters, arms_each=2, ahead=1)

    def live() -> list[int]:
        keys = [spawn._server_key(python, env) for python, env in interpreters]
        return [n for n, key in enumerate(keys) if key in supervisor.fork_servers]

    try:
        servers.begin(0)
        assert live() == [0, 1]
        first = supervisor.fork_servers[spawn._server_key(*interpreters[0])]
        child = supervisor.spawn(sys.executable, "fixture_events.py", [], interpreters[0][1])
        assert child.record()["launch"] == "fork_server"
        child.process.stdin.close()
        child.process.wait(10)
        servers.end(0)
        assert live() == [0, 1]  # one arm of the first is left
        servers.begin(0)
        servers.end(0)
        assert live() == [1] and first.process.poll() is not None
        execd = supervisor.spawn(sys.executable, "fixture_events.py", [], interpreters[0][1])
        assert execd.record()["launch"] == "exec"
        execd.process.stdin.close()
        execd.process.wait(10)
        servers.begin(1)
        assert live() == [1, 2]
    finally:
        servers.close()
    assert live() == []


# What an import can set that fork(2) would not give a child as it is: each makes the fork server give up.
AT_IMPORT = {
    "interval timer": ("import signal\nsignal.setitimer(signal.ITIMER_VIRTUAL, 50)", "interval timer armed"),
    "POSIX timer": (
        "import ctypes\ntimer = ctypes.c_void_p()\nctypes.CDLL(None).timer_create(1, None, ctypes.byref(timer))",
        "POSIX timer",
    ),
    "subreaper": ("import ctypes\nctypes.CDLL(None).prctl(36, 1, 0, 0, 0)", "child-subreaper flag set"),
    "parent-death signal": ("import ctypes\nctypes.CDLL(None).prctl(1, 15, 0, 0, 0)", "parent-death signal set"),
    "pending signal": (
        "import os, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])\n"
        "os.kill(os.getpid(), signal.SIGUSR2)",
        "signal pending",
    ),
    "record lock": (
        "import fcntl, tempfile\nheld = tempfile.TemporaryFile()\nfcntl.lockf(held, fcntl.LOCK_EX)",
        "record lock held",
    ),
    "thread": (
        "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()",
        "thread",
    ),
    "wakeup fd": (
        "import os, signal\nr, w = os.pipe()\nos.set_blocking(w, False)\nsignal.set_wakeup_fd(w)",
        "wakeup fd",
    ),
}


@pytest.mark.parametrize("what", list(AT_IMPORT))
def test_fork_server_gives_up_on_state_a_fork_would_drop(tmp_path, what, supervisor):
    """An SDK that sets one at import (here a stand-in mcp package): its fixtures are exec'd, and why is said."""
    code, named = AT_IMPORT[what]
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text(code + "\n")
    env = {**spawn.child_env({"PYTHONPATH": str(tmp_path)}), spawn.SPAWN_MARKER: spawn.SPAWN_PLACEHOLDER}
    server = ForkServer([sys.executable], spawn.FIXTURES / "fork_server.py", env, supervisor.run_folder())
    try:
        with pytest.raises(ForkServerUnavailable, match=named):
            _forked(server, spawn.FIXTURES / "fixture_events.py", [])
        with pytest.raises(ForkServerUnavailable, match=named):  # every later fork says the same
            _forked(server, spawn.FIXTURES / "fixture_events.py", [])
    finally:
        server.close(spawn.TERM_GRACE)


def test_fork_server_asleep_in_its_preload_is_given_up(tmp_path, supervisor):
    """A preload asleep (an import that never returns) neither runs nor waits for a CPU: after STALL_BOUND the
    server is given up and its fixtures are exec'd. (One only starved of CPU by the load is not: it waits on a
    run queue, which /proc/PID/schedstat counts.)"""
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    env = {**spawn.child_env({"PYTHONPATH": str(tmp_path)}), spawn.SPAWN_MARKER: spawn.SPAWN_PLACEHOLDER}
    server = ForkServer([sys.executable], spawn.FIXTURES / "fork_server.py", env, supervisor.run_folder())
    try:
        with pytest.raises(ForkServerUnavailable, match="no child from the fork server"):
            _forked(server, spawn.FIXTURES / "fixture_events.py", [])
        assert server.process.poll() is not None, "the server given up is ended"
    finally:
        server.close(spawn.TERM_GRACE)


ADOPTS_AN_ORPHAN = textwrap.dedent(
    """
    import ctypes, os, socket, sys, time
    from fork_server import _reap
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # a child subreaper: it adopts what its children leave
    ours, theirs = socket.socketpair()
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            os.read(int(sys.argv[1]), 1)  # until the probe says so, then end as an orphan
            os._exit(0)
        os._exit(5)
    while os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT) is None:
        pass
    print(os.getpid(), flush=True)
    reaped = _reap({child: theirs})  # the child only: the grandchild, adopted once it ends, comes next
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)  # the adopted orphan has ended
    except ChildProcessError:  # it ended before the first _reap, which reaped it already
        pass
    reaped += _reap({})
    print(reaped == [child], ours.recv(100).decode(), flush=True)
    """
)


def test_fork_server_reaps_an_orphan_it_adopted_and_goes_on(tmp_path):
    """A pid it never forked (an orphan a subreaper adopts) is reaped and not reported, not a KeyError."""
    script = tmp_path / "adopt.py"
    script.write_text(ADOPTS_AN_ORPHAN)
    release_r, release_w = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(spawn.FIXTURES)}
    adopter = subprocess.Popen(
        [sys.executable, str(script), str(release_r)], stdout=subprocess.PIPE, env=env, pass_fds=(release_r,)
    )
    os.close(release_r)
    read_line(adopter.stdout)
    os.write(release_w, b"x")
    os.close(release_w)
    out, _ = adopter.communicate(timeout=30)
    assert adopter.returncode == 0
    assert out.decode().split() == ["True", '{"returncode":', "5}"]


SIGINT_HANDLER_AT_IMPORT = """
import signal
def sdk_sigint(signum, frame):
    pass
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # as asyncio.run decides: a choice made is kept
    signal.signal(signal.SIGINT, sdk_sigint)
"""
DISPOSITIONS = """
import mcp, signal
print(signal.getsignal(signal.SIGINT).__name__, signal.getsignal(signal.SIGQUIT).name)
"""


@pytest.mark.parametrize("probe_sigint", ["default", "ignored"])
@pytest.mark.parametrize("launch", ["exec", "fork_server"])
def test_a_sigint_handler_set_at_import_survives_into_the_fixture(tmp_path, launch, probe_sigint, supervisor):
    """An SDK that installs a SIGINT handler at import (here a stand-in mcp package) has it in the fixture, exec'd
    or forked, as in `python fixture.py` started from a shell: also when the probe runs as a background job (its
    SIGINT ignored, which an exec would pass on and the import would then leave alone), SIGQUIT's default too."""
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text(SIGINT_HANDLER_AT_IMPORT)
    script = tmp_path / "dispositions.py"
    script.write_text(DISPOSITIONS)
    env = {"PYTHONPATH": str(tmp_path)}
    servers = spawn.ForkServers(supervisor, [(sys.executable, env)], arms_each=1, ahead=0)
    ignored = probe_sigint == "ignored"  # a background job's: both ignored (the suite restores both at its start)
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
    before_quit = signal.signal(signal.SIGQUIT, signal.SIG_IGN if ignored else signal.SIG_DFL)
    try:
        if launch == "fork_server":
            servers.begin(0)
        child = supervisor.spawn(sys.executable, str(script), [], env)
        assert child.record()["launch"] == launch
        assert read_line(child.process.stdout).decode().split() == ["sdk_sigint", "SIG_DFL"]
        child.process.stdin.close()
        assert child.process.wait(10) == 0
    finally:
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGQUIT, before_quit)
        servers.close()

"""The probe under faults it does not expect: every wait bounded, the run goes on, no lie."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc

import pytest

from stdio_probe.core import sample, spawn, wire
from stdio_probe.core.host_contract import Pidfd
from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix

SHORT = Options(window=2.0)


def test_hung_driver_is_an_error_within_the_window_and_the_run_goes_on(broken, pinned):
    started = time.monotonic()
    runs = run_matrix([broken("hang-client"), pinned], ["L3"], SHORT)
    assert time.monotonic() - started < 30, "a hung driver must not hold the run"
    assert [run["verdict"] for run in runs] == ["error", "reproduced"]
    assert "no checkpoint for 2 s" in runs[0]["reason"]
    assert runs[0]["arms"]["bug"]["ended_by"] in ("SIGTERM", "SIGKILL")
    # the hang is in an import the fork server preloads: that server is given up, the driver exec'd
    assert runs[0]["arms"]["bug"]["launch"] == "exec"
    assert "fork server" in runs[0]["arms"]["bug"]["fork_server_unavailable"]
    assert runs[1]["arms"]["bug"]["launch"] == "fork_server"


def test_server_that_dies_at_start_is_never_reproduced(broken):
    runs = run_matrix([broken("crash-server")], ["L1", "L2"], SHORT)
    assert [run["verdict"] for run in runs] == ["inconclusive", "inconclusive"], [run["reason"] for run in runs]
    assert all(run["arms"]["bug"]["exit_code"] == 3 for run in runs)


def test_server_printing_garbage_is_never_reproduced(broken):
    runs = run_matrix([broken("garbage-server")], ["L1", "L2"], SHORT)
    assert [run["verdict"] for run in runs] == ["inconclusive", "inconclusive"], [run["reason"] for run in runs]


def test_reap_all_finds_reparented_grandchildren_by_marker(tmp_path, supervisor):
    """A grandchild in its own session, orphaned when its parent dies, is still found and killed."""
    script = tmp_path / "orphan_maker.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        "time.sleep(600)\n"
    )
    child = supervisor.spawn(sys.executable, str(script), [], {})
    deadline = time.monotonic() + 300  # a safety net: the parent's exit ends the wait, not a clock (a loaded machine)

    def grandchild_started() -> bool:  # exec'd: past its setsid, out of the parent's group (before, stop kills it)
        return any("time.sleep(600)" in p["cmdline"] and p["pid"] != child.pid for p in spawn.run_processes())

    while not grandchild_started() and child.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.stop()  # kills the parent's group only: the grandchild is re-parented, still alive
    [orphan] = spawn.run_processes()
    assert orphan["pid"] != child.pid
    assert supervisor.reap_all() == 1
    assert spawn.run_processes() == []


def test_a_run_inside_the_tests_own_shares_its_children_and_takes_none_for_an_orphan(supervisor):
    """A supervisor made inside another's arm scope (a runner's, inside the test's) is nested in it: what either
    started is neither's orphan (an orphan is held by a pidfd and reaped through it, which would take the exit
    status from its Popen); each exit status stays its own."""
    with spawn.Supervisor() as inner:
        theirs = inner.spawn(sys.executable, "fixture_events.py", [], {})
        mine = supervisor.spawn(sys.executable, "fixture_events.py", [], {})
        assert supervisor.adopted() == [] and inner.adopted() == []
        for child in (theirs, mine):
            child.process.stdin.close()
            child.process.wait(10)
            child.close()
        assert supervisor.adopted() == [] and inner.adopted() == []
    assert theirs.process.returncode == mine.process.returncode == 0


def test_a_scan_that_finds_a_process_gone_before_it_is_held_is_not_quiet():
    """kill_rounds on a pid hopper that every scan reads mid-hop, as a scan of a loaded machine does: the process it
    reports alive has exited by the time it is held, its successor (started meanwhile) not listed. Such a scan is
    not quiet, so the rounds go on until one holds and kills the current successor; before that rule, three such
    scans in a row ended the reap with the successor alive (seen in the suite, the hostile hopper's leftover).
    The scans are staged (find); the processes and the signals are real."""
    hops = []

    def hop() -> None:
        hops.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]))

    def find() -> dict[int, dict]:  # five scans read the hopper mid-hop, then one finds its live successor
        if len(hops) <= 5:
            gone = hops[-1]
            hop()
            gone.kill()
            gone.wait()
            return {gone.pid: {"pid": gone.pid}}
        return {process.pid: {"pid": process.pid} for process in hops if process.poll() is None}

    hop()
    try:
        spawn.kill_rounds(find, lambda pid: pid in {process.pid for process in hops}, spawn.STOP_GRACE)
        assert [process.poll() for process in hops].count(None) == 0, "the successor outlived the reap"
    finally:
        for process in hops:
            process.kill()
            process.wait()


def sleeper() -> subprocess.Popen:
    """A real process that lives until it is signalled."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


def test_a_scan_that_finds_only_what_is_not_ours_is_quiet():
    """A live process found but refused (not the run's: no marker, not adopted) is never signalled, and a scan
    that finds only such ones is quiet: the reap ends after QUIET_SCANS scans, within its grace, not at its end."""
    stranger = sleeper()
    scans = 0

    def find() -> dict[int, dict]:
        nonlocal scans
        scans += 1
        return {stranger.pid: {"pid": stranger.pid}}

    try:
        spawn.kill_rounds(find, lambda pid: False, grace=30.0)  # the grace a safety net: quiet scans end it
        assert scans == spawn.QUIET_SCANS and stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_a_pid_found_again_after_its_held_process_ended_is_held_anew():
    """What was spawned is held from the start; once it has ended and been reaped, its pid may be another
    process's, which a scan then finds: that one is held and reaped through a pidfd of its own, never taken for the
    ended one (which would leave it alive, and every scan unquiet until the reap's end). The reuse is staged (the
    ended process's pidfd under the found process's pid); the processes and the signals are real."""
    ended, taker = sleeper(), sleeper()
    ended_fd = Pidfd.open(ended.pid)
    ended.kill()
    ended.wait()
    ended_fd.pid = taker.pid  # the number, given to another process since

    def find() -> dict[int, dict]:
        return {taker.pid: {"pid": taker.pid}} if taker.poll() is None else {}

    try:
        spawn.kill_rounds(find, lambda pid: True, spawn.STOP_GRACE, {ended: ended_fd})
        assert taker.poll() is not None, "the process that took the pid outlived the reap"
    finally:
        ended_fd.close()
        taker.kill()
        taker.wait()


def test_a_process_that_ends_as_its_sigterms_wait_runs_out_is_recorded_ended_by_the_sigterm(
    supervisor, tmp_path, monkeypatch
):
    """Child.stop: a server whose SIGTERM handler ends it just as the stop's wait for it runs out ended by the
    SIGTERM, not by itself (it had not ended before it). The moment is staged (the wait runs out as it exits); the
    process and its signal are real."""
    script = tmp_path / "ends_on_sigterm.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    child = supervisor.spawn(sys.executable, str(script), [], {})
    assert child.process.stdout.readline() == b"ready\n"
    exited = child.process.wait

    def ran_out(timeout: float | None = None) -> int:
        exited(300)  # a safety net: its exit ends the wait
        raise subprocess.TimeoutExpired("the stop's wait", timeout)

    monkeypatch.setattr(child.process, "wait", ran_out)
    child.stop()
    assert (child.process.returncode, child.ended_by) == (0, "SIGTERM")


def test_a_process_whose_exit_has_begun_when_the_stop_looks_is_recorded_ended_by_itself(
    supervisor, tmp_path, monkeypatch
):
    """Child.stop: a server that exits by itself (os._exit(1), as one that exits on server/discover) may be seen
    with its stdout at EOF before it is a zombie; a stop that looks then sends no signal it could be ended by. The
    moment is made long, not staged: the exit unmaps 256 MB (a fraction of a second of kernel time, which the stop
    waits for while it progresses), and the stop runs once the kernel shows the exit under way. A try counts only
    if the stop's own look found it under way (a spy on sample.exiting); one that missed it is made again."""
    script = tmp_path / "exits_slowly.py"
    script.write_text("import os\nheld = b'1' * (256 << 20)\nprint('ready', flush=True)\nos._exit(1)\n")
    looks: list[bool] = []
    kernel_says = sample.exiting

    def exiting(pid: int) -> bool:
        looks.append(kernel_says(pid))
        return looks[-1]

    monkeypatch.setattr(spawn.sample, "exiting", exiting)
    for _ in range(5):
        child = supervisor.spawn(sys.executable, str(script), [], {})
        assert child.process.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 60  # a safety net: its exit ends the look
        while not (under_way := kernel_says(child.pid)) and child.process.poll() is None:
            assert time.monotonic() < deadline, "neither exiting nor exited after 60 s"
        looks.clear()
        child.stop()
        if under_way and True in looks:  # the stop's look found the exit under way
            assert (child.process.returncode, child.ended_by) == (1, None), (child.ended_by, looks)
            assert child.record()["ended_by"] == "self"
            return
    pytest.fail("the stop never looked while the exit was under way, in 5 tries")


def test_a_fixtures_stderr_is_read_from_its_tail_however_much_it_wrote(tmp_path, supervisor):
    """A fixture's stderr is a file (the child may write any amount): what is kept is its last STDERR_LIMIT
    characters, read from the end, its newest line last."""
    script = tmp_path / "stderr_flood.py"
    script.write_text("import os\nos.write(2, b'x' * 50_000_000 + b'\\nthe last line\\n')\n")
    child = supervisor.spawn(sys.executable, str(script), [], {})
    child.process.wait(timeout=60)
    tracemalloc.start()
    try:
        text = child.stderr_text()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak} bytes allocated to read the tail"
    assert len(text) == spawn.STDERR_LIMIT + 1 and text.startswith("…x") and text.endswith("\nthe last line\n")


LONG_LINE = """
import sys, time
sys.stdout.buffer.write(b"x" * 4_000_000 + b"\\n")
sys.stdout.flush()
time.sleep(60)
"""


def test_a_handshake_read_off_the_pipe_keeps_nothing_of_a_line_without_end(tmp_path, supervisor):
    """wire.initialize without a reader (L12's fixture) reads the answer line straight off the pipe: a line of
    4 MB before its newline costs one chunk's memory, not the line's (its bytes come a pipe's worth a poll)."""
    script = tmp_path / "long_line.py"
    script.write_text(LONG_LINE)
    child = supervisor.spawn(sys.executable, str(script), [], {})
    tracemalloc.start()
    try:
        answered = wire.initialize(child, None, idle_bound=30.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        child.stop()
    assert answered, "the line's end was read"
    assert peak < 1_000_000, f"{peak} bytes allocated to read the line"


def test_a_ring_drains_its_pipe_after_the_stream_it_was_given_is_closed(supervisor):
    """Child.close closes a host's stdout, which HostRun's ring drains: the ring reads on, from its own descriptor."""
    read, write = os.pipe()
    stream = os.fdopen(read, "rb")
    ring = spawn.StderrRing(stream, supervisor)
    stream.close()
    os.write(write, b"written after the close")
    os.close(write)
    deadline = time.monotonic() + 30  # a safety net: the ring's thread reading the bytes ends the wait
    while ring.total < len(b"written after the close") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ring.read() == b"written after the close"


def test_a_signal_during_the_runs_end_leaves_its_folder_to_the_guardian(monkeypatch):
    """The end's reap cut short by a signal stops the run, and its folder (a sandbox per start) is not removed
    inline, which can take a second of the signal's 2 s: the guardian removes it once the process has ended."""
    supervisor = spawn.Supervisor()
    folder = supervisor.run_folder()

    def interrupted(grace: float = spawn.TERM_GRACE) -> int:
        raise KeyboardInterrupt  # what the CLI's handler raises in the main thread (an Interrupted)

    monkeypatch.setattr(supervisor, "reap_all", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            supervisor.end()
        assert os.path.isdir(folder) and supervisor.stopping()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_marked_process_of_another_user_is_never_held(monkeypatch):
    """Pidfd.open's liveness signal (0) is refused for another user's process (EPERM), which may carry the run's
    marker in its argv (the scenario server's --run): it is not ours to signal, where it raised out of the reap.
    As root the kernel grants that signal to any process, so the refusal is what os would raise for an
    unprivileged probe."""

    def refused(fd: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    closed = []
    close = Pidfd.close
    monkeypatch.setattr(signal, "pidfd_send_signal", refused)
    monkeypatch.setattr(Pidfd, "close", lambda held: (closed.append(held.pid), close(held)))
    assert Pidfd.open(os.getpid(), lambda pid: True) is None
    assert closed == [os.getpid()], "its pidfd is closed"

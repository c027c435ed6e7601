"""The L1 hang proof against fixes of shapes it did not foresee, and its conservative default.

Each patched SDK ends the server after stdin EOF from a source no thread's syscall shows (a process-wide
timer, an interval timer with a handler, an fd another process writes). The proof must see it and stay
silent, so both methods wait for the exit and agree: not_reproduced, on the transport pair and on the
server-API pair.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from stdio_probe.core import hang, sample, wire
from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.core.spawn import StderrRing, current
from stdio_probe.sdk import driver
from stdio_probe.sdk.cases import l1_full_pipe
from tests.proof_readings import proof_readings
from tests.sdk_fixes import UNFORESEEN_L1_FIXES, patched_sdk

WHY_NOT = {  # what the fast method's last proof attempt must name
    "alarm-default": "interval timer armed: real",
    "posix-timer": "POSIX timer exists",
    "itimer-handler": "interval timer armed: real",
    "peer-wakeup": "of its spawned tree",  # the detached grandchild, by its marker
}


@pytest.mark.parametrize("method", ["fast", "window"])
@pytest.mark.parametrize("name", list(UNFORESEEN_L1_FIXES))
def test_unforeseen_fix_is_not_reproduced_by_either_method(pinned, tmp_path, name, method):
    sdk = patched_sdk(tmp_path, name, UNFORESEEN_L1_FIXES[name], pinned)  # a copy per test: tests spread freely
    [run] = run_matrix([sdk], ["L1"], Options(method=method))
    assert run["verdict"] == "not_reproduced", proof_readings(run)
    tracebacks = {arm: record.get("traceback") for arm, record in run["arms"].items() if record.get("traceback")}
    assert run["pairs"]["server API"]["verdict"] == "not_reproduced", (run["pairs"], tracebacks)
    for arm in ("bug", "bug_server_api"):
        record = run["arms"][arm]
        assert record["decided_by"] == "exit" and record["ended_by"] == "self", record["decided_by"]
        if method == "fast":
            seen = [attempt["why_not"] for attempt in record["proof_attempts"]]
            assert any(WHY_NOT[name] in (why or "") for why in seen), seen


def test_stock_sdk_is_proven_hung_on_both_pairs(pinned_run):
    """The session's full run of the pinned SDK: L1 reproduced on both pairs, decided by the kernel proof where it
    landed before a window without progress (on a loaded machine the window may come first: how it was decided is
    information, the verdict is not); draining the pipe released the writer, so the proof names the cause."""
    run = pinned_run["runs"]["L1"]
    assert run["verdict"] == "reproduced" and run["pairs"]["server API"]["verdict"] == "reproduced", run["reason"]
    for arm in ("bug", "bug_server_api"):
        record = run["arms"][arm]
        assert record["decided_by"] in ("proof", "window"), arm
        if record["decided_by"] == "proof":
            assert record["proof"]["proven"] and record["exited_after_drain"], arm
            assert record["proof"]["timer_answer"]["itimers"]["real"] == [0.0, 0.0]


@contextmanager
def writer_blocked_at_eof(sdk) -> Iterator:
    """The stdio writer fixture on sdk, blocked writing an answer larger than the pipe, its stdin closed: L1's
    state, for a proof to read; stopped after."""
    payload = ["--payload-bytes", str(l1_full_pipe.PAYLOAD_BYTES)]
    child = current().spawn(sdk.python, "fixture_stdio_writer.py", payload, {})
    try:
        wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert l1_full_pipe._wait_in_flight(child, None, 10.0)["seen"]
        wire.close_stdin(child)
        yield child
    finally:
        child.stop()


def test_no_proof_for_a_process_that_cannot_be_asked_about_its_timers(pinned):
    """The entry point's default: without a timer query (a server we did not write) there is no proof."""
    with writer_blocked_at_eof(pinned) as child:
        proof = hang.prove_blocked_on_pipe(child.pid, child.process.stdout.fileno(), marker=child.marker)
        assert not proof["proven"] and proof["why_not"] == "interval timers cannot be asked of this process"


def test_a_runtime_that_cannot_be_read_is_named_not_taken_for_a_sigalrm_handler(pinned, monkeypatch):
    """A server we did not write whose executable cannot be read (sample.go_runtime: None) may be a Go program:
    no proof, and the reason says the runtime was not known, whatever its signal dispositions."""
    with writer_blocked_at_eof(pinned) as child:
        monkeypatch.setattr(sample, "go_runtime", lambda pid: None)
        monkeypatch.setattr(sample, "caught_signals", lambda pid: 1 << (signal.SIGALRM - 1))
        proof = hang.prove_blocked_on_pipe(child.pid, child.process.stdout.fileno(), marker=child.marker, foreign=True)
        assert not proof["proven"] and proof["why_not"].startswith("runtime not known"), proof["why_not"]


def test_blocked_test_counts_proofs_in_a_row_within_one_wait(monkeypatch):
    """driver.blocked_test's PROOF_SAMPLES proofs are of one wait: a checkpoint in between (the driver moved on)
    starts the count again, so two readings before it and one after decide nothing."""
    monkeypatch.setattr(driver.hang, "prove_blocked_together", lambda members: {"proven": True, "why_not": None})
    monkeypatch.setattr(driver.sample, "marked_processes", lambda *args: [])
    test = driver.blocked_test(Options(10.0, "fast"), "arm", lambda since, last: since)
    marker, short = ("MARKER", "value"), range(driver.PROOF_SAMPLES - 1)
    assert all(test(1, marker, 0.1, "calling") is None for _ in short)
    assert test(1, marker, 0.1, "first") is None
    assert [test(1, marker, 0.1, "first") for _ in short][-1]["decided_by"] == "proof"


WAITER = """
import os, random, time
while True:
    child = os.fork()
    if child == 0:
        time.sleep(random.random() * 0.004)
        os._exit(0)
    os.waitpid(child, 0)
"""


def test_the_syscall_reader_survives_a_helper_that_exits_between_readings():
    """A process that waits for a child in wait4 (as a fix that waits for its helper at EOF does), its children
    exiting while the reader reads: wait4's arguments are never taken for a pollfd array, and whatever a thread
    was doing by the next reading makes the attempt unproven, never an exception (a MemoryError once)."""
    waiter = subprocess.Popen([sys.executable, "-c", WAITER], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        readings = waits = 0
        while (readings < 400 or waits < 20) and time.monotonic() < deadline:  # its start may take a while
            proof = hang.prove_waiting_forever(waiter.pid, ("PROBE_SPAWN_ID", "none"))
            assert isinstance(proof["proven"], bool)
            calls = [thread["syscall"] for thread in proof["threads"]]
            waits += sum(1 for call in calls if call.get("name") == "wait4")
            assert all("pollfds" not in call for call in calls if call.get("name") not in ("poll", "ppoll")), calls
            readings += 1
        assert waits > 0  # the reader met wait4: the test decided something
    finally:
        waiter.kill()
        waiter.wait()


def test_a_poll_array_of_an_impossible_size_is_not_read():
    assert sample.poll_fds(os.getpid(), 0x57D7, 0x7FFE8BA53A4C) is None
    assert sample.poll_fds(os.getpid(), 0, 0) == []  # a poll of no fds (a wait for a signal) watches none
    assert "pollfds" not in sample.describe_syscall("61 0xffffffff 0x7ffe8ba53a4c 0x0 0x0 0x0 0x0 0x7ffe 0x7f")


@contextmanager
def waiting_in_epoll(script: str, argument: str) -> Iterator[subprocess.Popen]:
    """A python -c script run with argument, once a thread of it waits in epoll (30 s at the most); killed after."""
    waiter = subprocess.Popen([sys.executable, "-c", script, argument], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
            t["syscall"].get("name", "").startswith("epoll") for t in sample.threads(waiter.pid)
        ):
            time.sleep(0.02)
        yield waiter
    finally:
        waiter.kill()
        waiter.wait()


LOOP_ON_TIMERFD = """
import ctypes, os, select, sys
timer = ctypes.CDLL(None).timerfd_create(1, os.O_CLOEXEC)  # CLOCK_MONOTONIC (os.timerfd_create: 3.13)
ctypes.CDLL(None).timerfd_settime(timer, 0, (ctypes.c_long * 4)(0, 0, int(sys.argv[1]), 0), None)
loop = select.epoll()
loop.register(timer, select.EPOLLIN)
loop.poll()
"""


@pytest.mark.parametrize(("armed_s", "proven"), [(600, False), (0, True)], ids=["armed", "disarmed"])
def test_a_loop_waiting_on_an_armed_timerfd_can_wake_and_on_a_disarmed_one_cannot(armed_s, proven):
    """A process whose one thread sleeps in epoll_wait with no timeout on a timerfd: armed, the timerfd wakes
    it (its fdinfo's it_value), disarmed nothing can. hang.wake_source decides, and every proof of a wait
    reads it: the single process's (L10, the H checks) and the joint one (L5, L7, L8, L9)."""
    marker = ("PROBE_SPAWN_ID", "none")
    with waiting_in_epoll(LOOP_ON_TIMERFD, str(armed_s)) as waiter:
        why, _ = hang.wake_source(waiter.pid, sample.threads(waiter.pid), allowed=())
        assert (why is None) is proven, why
        if not proven:
            assert "anon_inode:[timerfd]) may be ready: it_value" in why, why
        assert hang.prove_waiting_forever(waiter.pid, marker)["proven"] is proven
        assert hang.prove_blocked_together({waiter.pid: marker})["proven"] is proven


LOOP_ON_SIGNALFD = """
import ctypes, os, select, signal, sys
if sys.argv[1] == "held":  # SIGALRM blocked: an interval timer's stays pending, and the signalfd becomes readable
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    signal.setitimer(signal.ITIMER_REAL, 600)
mask = (ctypes.c_ulong * 16)(1 << (signal.SIGALRM - 1))
loop = select.epoll()
loop.register(ctypes.CDLL(None).signalfd(-1, mask, os.O_CLOEXEC), select.EPOLLIN)
loop.poll()
"""


@pytest.mark.parametrize(("alarm", "proven"), [("held", False), ("default", True)])
def test_a_loop_on_a_signalfd_can_be_woken_by_an_interval_timer_when_sigalrm_is_blocked(alarm, proven):
    """A host we cannot ask about its interval timers, its loop in epoll_wait on a signalfd for SIGALRM and no
    handler for it: with SIGALRM blocked in every thread, an ITIMER_REAL (which /proc does not show) leaves it
    pending and the signalfd readable, so no proof; with SIGALRM at its default action, a timer can only kill."""
    marker = ("PROBE_SPAWN_ID", "none")
    with waiting_in_epoll(LOOP_ON_SIGNALFD, alarm) as waiter:
        proof = hang.prove_waiting_forever(waiter.pid, marker)
        assert proof["proven"] is proven, proof["why_not"]
        if not proven:
            assert proof["why_not"].startswith("SIGALRM is blocked in every thread"), proof["why_not"]
        assert hang.prove_blocked_together({waiter.pid: marker})["proven"] is proven


def test_a_proof_keeps_what_each_thread_waited_on_and_the_row_that_ruled_out_each_source():
    """A process reading a pipe whose only writer is the probe, proven waiting forever: its proof's readings
    name the thread, its read on fd 0 and the row that ruled that fd out, and each process-wide row; the same
    readings in the joint proof, and bounded (a few hundred bytes a thread)."""
    read_end, write_end = os.pipe()
    reader = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=read_end)
    os.close(read_end)
    marker = ("PROBE_SPAWN_ID", "none")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (proof := hang.prove_waiting_forever(reader.pid, marker))["proven"]:
            time.sleep(0.02)
        readings = proof["readings"]
        ruled_out = {"pipe: other end held only by the probe": [0]}
        assert readings["threads"] == [{"tid": reader.pid, "waits_in": "read", "fd": 0, "ruled_out": ruled_out}], proof
        rows = {"signals", "posix_timers", "children", "marked", "adopted", "interval_timers"}
        assert set(readings["process"]) == rows
        assert len(json.dumps(readings)) < 600, readings
        assert hang.prove_blocked_together({reader.pid: marker})["readings"] == {reader.pid: readings}
    finally:
        reader.kill()
        reader.wait()
        os.close(write_end)


def test_a_writer_blocked_on_a_pipe_the_probe_drains_is_never_proven_waiting():
    """A process writing without end to a pipe a StderrRing drains (a host's stdout and stderr, a server's stderr:
    H7's flood goes there): blocked in write() whenever the pipe is full, and woken by the probe's next read, so
    the row "other end held only by the probe" never rules that pipe out (Supervisor.drained_pipes)."""
    writer = subprocess.Popen(
        [sys.executable, "-c", "import os\nwhile True:\n    os.write(1, b'x' * 65536)"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    ring = StderrRing(writer.stdout, current())
    marker = ("PROBE_SPAWN_ID", "none")
    try:
        deadline, drained = time.monotonic() + 30, 0
        while drained < 5 and time.monotonic() < deadline:
            proof = hang.prove_waiting_forever(writer.pid, marker)
            assert not proof["proven"], proof["readings"]
            drained += "which the probe drains" in (proof["why_not"] or "")
        assert drained == 5, "the writer was never read blocked on the drained pipe"
        while ring.total == 0 and time.monotonic() < deadline:  # the ring's thread may not have run yet (a load)
            time.sleep(0.02)
        assert ring.total > 0, "the ring never drained the pipe"
    finally:
        writer.kill()
        writer.wait()

"""The no-progress clock against a load its CPU ticks cannot show (progress.Clock, "kept waiting")."""

from __future__ import annotations

import os
import sys
import time

import pytest

from stdio_probe.core import progress, sample

# a spinner that the load keeps off its CPU: pinned to one CPU beside two busy loops it forks (in its session, so
# that the scheduler weighs them against it, not session against session), it turns SCHED_IDLE (a weight of 3
# against their 1024 each) and spins, getting a few ms of that CPU a second: less than a tick in most seconds
STARVED_SPINNER = (
    "import os, sys\n"
    "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "for _ in range(2):\n"
    "    if os.fork() == 0:\n"
    "        while True:\n"
    "            pass\n"
    "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
    "while True:\n"
    "    pass\n"
)


def test_a_spinner_kept_off_every_cpu_is_progress_never_idle(tmp_path, supervisor):
    """The window rule's premise under the worst load: a spinner starved to less than a tick a second (measured
    in the suite: a 1 s window read idle beside busy loops in sessions of their own) is runnable throughout, so
    the clock never reads it idle for a window of 1 s: read every READ_EVERY s for 2 s, then at readings 2.5 s
    apart (a probe that the load kept from reading: the spinner may have had turns in between, never a sleep). Its
    ticks are shown to have stood still for a window (the load was there: without the rule, that
    window would have read idle)."""
    if os.getpriority(os.PRIO_PROCESS, 0) > 0 or os.sched_getscheduler(0) not in (os.SCHED_OTHER, os.SCHED_BATCH):
        pytest.skip("the tests run niced or idle: the busy loops inherit it and weigh too little to starve the spinner")
    script = tmp_path / "starved_spinner.py"
    script.write_text(STARVED_SPINNER)
    spinner = supervisor.spawn(sys.executable, str(script), [str(min(os.sched_getaffinity(0)))], {})
    try:
        deadline = time.monotonic() + 60  # a safety net: the spinner's turn to SCHED_IDLE ends the wait
        while spinner.process.poll() is None and time.monotonic() < deadline:
            if os.sched_getscheduler(spinner.pid) == os.SCHED_IDLE:
                break
            time.sleep(0.02)
        assert os.sched_getscheduler(spinner.pid) == os.SCHED_IDLE, spinner.stderr_text()
        clock = progress.Clock(lambda: (spinner.pid,))  # the spinner alone: its busy loops are the load
        ticks_moved = time.monotonic()
        ticks, _ = sample.cpu_reading(spinner.pid)
        longest_still = 0.0
        for gap in [progress.READ_EVERY] * int(2.0 / progress.READ_EVERY) + [2.5, 2.5]:
            time.sleep(gap)
            idle = clock.idle_s()
            assert spinner.process.poll() is None, spinner.stderr_text()
            assert idle < 1.0, f"a spinner kept off the CPU read as idle for a window (readings {gap} s apart)"
            if (now_ticks := sample.cpu_reading(spinner.pid)[0]) != ticks:
                ticks, ticks_moved = now_ticks, time.monotonic()
            longest_still = max(longest_still, time.monotonic() - ticks_moved)
        assert longest_still >= 1.0, f"the spinner's ticks moved every {longest_still:.2f} s: no load was staged"
    finally:
        spinner.stop()

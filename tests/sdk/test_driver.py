"""run_driver's bound on a driver between checkpoints: real processes that never report, one asleep, one busy."""

from __future__ import annotations

import sys
import time

import pytest

from stdio_probe.core import progress, sample
from stdio_probe.core.model import Options, Sdk
from stdio_probe.sdk.driver import run_driver, stuck_test

STEP = 1.5  # the no-progress bound per checkpoint, for a driver asleep (nothing to starve)
BUSY_STEP = 3.0  # for a busy one: under two busy loops in sessions of their own a spinner waited over 1 s for a tick
OUTER = 2  # the outer bound, in steps (progress.OUTER_WINDOWS, shortened: the busy driver spins until it)


@pytest.mark.parametrize(
    ("body", "step", "error", "doing"),
    [
        ("import os\nos.read(os.pipe()[0], 1)\n", STEP, "no progress and reached no checkpoint for 1.5 s", {"read"}),
        ("while True:\n    pass\n", BUSY_STEP, "busy throughout", {"running", "user"}),  # on a CPU or queued for one
    ],
    ids=["asleep", "busy"],
)
def test_a_driver_that_reaches_no_checkpoint_is_an_error_saying_how_with_its_tree(
    tmp_path, monkeypatch, body, step, error, doing
):
    """Asleep, it is called out after the step's bound without progress; busy, only at the outer bound, and the
    error says it was busy, not stuck. Either way the record keeps what each thread of its tree was doing."""
    monkeypatch.setattr(progress, "OUTER_WINDOWS", OUTER)
    script = tmp_path / "silent_driver.py"
    script.write_text(body)
    record = run_driver(Sdk("here", sys.executable), [], Options(), str(script), step)
    assert error in record["error"], record["error"]
    [driver] = record["tree_at_error"]
    assert driver["pid"] == record["pid"] and "silent_driver.py" in driver["cmdline"]
    [thread] = driver["threads"]
    assert thread["syscall"] in doing, driver


def test_a_case_window_over_when_the_step_bound_runs_out_decides_the_arm_not_an_error(tmp_path):
    """The case's window (1 s) ends inside the step's bound (1.5 s), but one reading of its stuck test outlasts both
    (a proof that takes 2 s, as a /proc scan can under load: a stand-in here; the driver is real): the test is asked
    once more as the bound runs out, and the window decides the arm. The slow reading comes only once the driver
    was seen asleep a reading before, so the clock has read it asleep and the bound does run out during it."""
    script = tmp_path / "asleep_driver.py"
    script.write_text("import os\nos.read(os.pipe()[0], 1)\n")
    asleep_at: list[float] = []

    def pending_s(since: float, last: str | None) -> float:
        return time.monotonic() - asleep_at[0] if asleep_at else 0.0

    def slow_once_asleep(pid: int, marker: tuple[str, str]) -> dict:
        if asleep_at:
            time.sleep(2.0)
        elif [thread["syscall"].get("name") for thread in sample.threads(pid)] == ["read"]:
            asleep_at.append(time.monotonic())
        return {"proven": False}

    options = Options(window=1.0)
    stuck = stuck_test(options, pending_s, slow_once_asleep)
    record = run_driver(Sdk("here", sys.executable), [], options, str(script), STEP, stuck)
    assert "error" not in record and record["stuck"]["decided_by"] == "window", record.get("error")

"""run_driver's bound on a driver between checkpoints: real processes that never report, one asleep, one busy."""

from __future__ import annotations

import sys

import pytest

from stdio_probe.core import progress
from stdio_probe.core.model import Options, Sdk
from stdio_probe.sdk.driver import run_driver

STEP = 1.5  # the no-progress bound per checkpoint: a runnable process, however starved, reads a tick well within it
OUTER = 2  # the outer bound, in steps (progress.OUTER_WINDOWS, shortened: the busy driver spins until it)


@pytest.mark.parametrize(
    ("body", "error", "syscall"),
    [
        ("import os\nos.read(os.pipe()[0], 1)\n", "made no progress and reached no checkpoint for 1.5 s", "read"),
        ("while True:\n    pass\n", "busy throughout", "running"),
    ],
    ids=["asleep", "busy"],
)
def test_a_driver_that_reaches_no_checkpoint_is_an_error_saying_how_with_its_tree(
    tmp_path, monkeypatch, body, error, syscall
):
    """Asleep, it is called out after the step's bound without progress; busy, only at the outer bound, and the
    error says it was busy, not stuck. Either way the record keeps what each thread of its tree was doing."""
    monkeypatch.setattr(progress, "OUTER_WINDOWS", OUTER)
    script = tmp_path / "silent_driver.py"
    script.write_text(body)
    record = run_driver(Sdk("here", sys.executable), [], Options(), str(script), STEP)
    assert error in record["error"], record["error"]
    [driver] = record["tree_at_error"]
    assert driver["pid"] == record["pid"] and "silent_driver.py" in driver["cmdline"]
    assert [thread["syscall"] for thread in driver["threads"]] == [syscall], driver

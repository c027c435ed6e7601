"""The probe under faults it does not expect: every wait bounded, the run goes on, no lie."""

from __future__ import annotations

import time

from stdio_probe.model import Options
from stdio_probe.runner import run_matrix

SHORT = Options(window=2.0)


def test_hung_driver_is_an_error_within_the_window_and_the_run_goes_on(broken, pinned):
    started = time.monotonic()
    runs = run_matrix([broken("hang-client"), pinned], ["L3"], SHORT, lambda *event: None)
    assert time.monotonic() - started < 30, "a hung driver must not hold the run"
    assert [run["verdict"] for run in runs] == ["error", "reproduced"]
    assert "no checkpoint for 2 s" in runs[0]["reason"]
    assert runs[0]["arms"]["bug"]["ended_by"] in ("SIGTERM", "SIGKILL")


def test_server_that_dies_at_start_is_never_reproduced(broken):
    runs = run_matrix([broken("crash-server")], ["L1", "L2"], SHORT, lambda *event: None)
    assert [run["verdict"] for run in runs] == ["inconclusive", "inconclusive"], [run["reason"] for run in runs]
    assert all(run["arms"]["bug"]["exit_code"] == 3 for run in runs)

"""driver.stuck_test's rule on its own: the window, the proofs in a row of one wait, and the window read again
after a proof that took long (the proofs here are stand-ins: what is judged is the rule, not a process)."""

from __future__ import annotations

import time

from stdio_probe.core.model import Options
from stdio_probe.sdk.driver import PROOF_SAMPLES, stuck_test

MARKER = ("PROBE_SPAWN_ID", "0" * 32)


def pending_since(origin: float):
    return lambda since, last: time.monotonic() - origin


def test_a_proof_that_outlasts_the_window_gives_the_window_not_nothing():
    """On a loaded machine one proof can take seconds: the window is over once it returns, and the test says so
    then, before the driver's own step bound can run out on a driver that made no progress meanwhile."""

    def slow_unproven(pid, marker):
        time.sleep(0.3)
        return {"proven": False}

    test = stuck_test(Options(window=0.2), pending_since(time.monotonic()), slow_unproven)
    found = test(1, MARKER, 0.0, "started")
    assert found is not None and found["decided_by"] == "window", found


def test_proofs_in_a_row_decide_and_a_new_checkpoint_starts_the_count_again():
    test = stuck_test(Options(window=60.0), pending_since(time.monotonic()), lambda pid, marker: {"proven": True})
    for _ in range(PROOF_SAMPLES - 1):
        assert test(1, MARKER, 0.0, "started") is None
    assert test(1, MARKER, 0.0, "moved on") is None, "a proof of the wait before counts for this one"
    for _ in range(PROOF_SAMPLES - 2):
        assert test(1, MARKER, 0.0, "moved on") is None
    assert test(1, MARKER, 0.0, "moved on")["decided_by"] == "proof"


def test_nothing_is_decided_before_the_outcome_is_awaited_and_the_window_method_never_proves():
    never = stuck_test(Options(window=0.0), lambda since, last: None, lambda pid, marker: {"proven": True})
    assert never(1, MARKER, 0.0, None) is None
    proved: list[int] = []
    window = stuck_test(Options(method="window", window=60.0), pending_since(time.monotonic()), lambda p, m: proved)
    assert window(1, MARKER, 0.0, "started") is None and proved == []

"""driver.stuck_test's rule on its own: the window and the proofs in a row of one wait (the proofs here are
stand-ins: what is judged is the rule, not a process)."""

from __future__ import annotations

import time

from stdio_probe.core.model import Options
from stdio_probe.sdk.driver import PROOF_SAMPLES, stuck_test

MARKER = ("PROBE_SPAWN_ID", "0" * 32)


def pending_since(origin: float):
    return lambda since, last: time.monotonic() - origin


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
    asked: list[int] = []

    def proven(pid: int, marker: tuple[str, str]) -> dict:
        asked.append(pid)
        return {"proven": True}

    window = stuck_test(Options(method="window", window=60.0), pending_since(time.monotonic()), proven)
    for _ in range(PROOF_SAMPLES + 1):
        assert window(1, MARKER, 0.0, "started") is None
    assert asked == [], "the window method asked for a proof"

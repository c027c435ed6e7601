"""The one watch loop (observe.watch) on stand-in processes: what stops it, and the record it writes.

Nothing is spawned: a stand-in's poll() says when it "exits", a stand-in proof says what it proves.
"""

from __future__ import annotations

import subprocess
import time
from types import SimpleNamespace

import pytest

from stdio_probe.core import observe

WINDOW = 0.5


class StandIn:
    """A process that exits once polled `after` times (never, with None); a wait polls once."""

    def __init__(self, after: int | None = None) -> None:
        self.after, self.polls = after, 0

    def poll(self) -> int | None:
        self.polls += 1
        return 0 if self.after is not None and self.polls > self.after else None

    def wait(self, timeout: float | None = None) -> int:
        if (code := self.poll()) is None:
            time.sleep(timeout)
            raise subprocess.TimeoutExpired("stand-in", timeout)
        return code


def proofs(*proven: bool):
    """A prove callable returning the given outcomes in turn (the last one from then on)."""
    answers = list(proven)

    def prove() -> dict:
        outcome = answers.pop(0) if len(answers) > 1 else answers[0]
        return {"proven": outcome, "why_not": None if outcome else "thread ran"}

    return prove


def test_an_exit_ends_the_watch_and_is_recorded_with_its_time():
    watched = observe.watch(StandIn(after=2), time.monotonic(), WINDOW, interval=0.01)
    record = watched.record("eof")
    assert watched.decided_by == "exit" and not watched.alive
    assert record["exit_after_eof_s"] == record["decided_after_eof_s"] < WINDOW
    assert "proof" not in record and "proof_attempts" not in record


def test_the_window_ends_a_watch_without_proof_and_the_process_is_alive():
    started = time.monotonic()
    watched = observe.watch(StandIn(), started, WINDOW, prove=proofs(False), interval=0.02)
    record = watched.record("sigterm")
    assert watched.decided_by == "window" and record["alive_at_decision"]
    assert record["decided_after_sigterm_s"] >= WINDOW and record["exit_after_sigterm_s"] is None
    [attempts] = record["proof_attempts"]
    assert attempts["why_not"] == "thread ran" and attempts["count"] > 1


def test_a_proof_counts_only_in_a_row():
    """A failed attempt between two proven ones starts the count again: three in a row take five attempts."""
    watched = observe.watch(
        StandIn(), time.monotonic(), WINDOW, prove=proofs(True, False, True), in_a_row=3, interval=0.001
    )
    assert watched.decided_by == "proof" and watched.alive
    assert watched.why_not == {None: 4, "thread ran": 1}


def test_look_runs_each_tick_before_the_proof_and_threads_can_be_left_out():
    seen: list[str] = []

    def prove() -> dict:
        seen.append("prove")
        return {"proven": True, "why_not": None, "threads": [{"tid": 1}]}

    watched = observe.watch(StandIn(), time.monotonic(), WINDOW, prove=prove, look=lambda: seen.append("look"))
    assert seen == ["look", "prove"]
    assert "threads" in watched.record("eof")["proof"]
    assert "threads" not in watched.record("eof", proof_threads=False)["proof"]


class ExitsAt:
    """A process that exits at time `at` of a clock of its own, which only its waits move on: the watch's reading
    of time is that clock (no sleep, no load can move an exit across the window's end)."""

    def __init__(self, at: float) -> None:
        self.at, self.now, self.waits = at, 0.0, []

    def poll(self) -> int | None:
        return 0 if self.now >= self.at else None

    def wait(self, timeout: float | None = None) -> int:
        self.waits.append(timeout)
        if self.now + timeout < self.at:
            self.now += timeout
            raise subprocess.TimeoutExpired("stand-in", timeout)
        self.now = self.at
        return 0


def test_an_exit_after_the_window_is_not_taken_for_one_within_it(monkeypatch):
    """The last wait is cut at the window's end: a process exiting 0.05 s past it (inside one interval of the
    last look) is alive at the decision, as session.wait_exit's "alive after bound" says."""
    process = ExitsAt(0.15)
    monkeypatch.setattr(observe, "time", SimpleNamespace(monotonic=lambda: process.now))
    watched = observe.watch(process, 0.0, 0.1, interval=0.08)
    assert process.waits == [0.08, pytest.approx(0.02)]
    assert watched.decided_by == "window" and watched.alive and watched.exit_after_s is None

"""The no-progress clock: how long a subject (a process and its descendants) has made no progress.

Every window of the probe's waits is read on this clock (method.md, "The window rule"): a window
counts only time in which the subject made no progress, so a machine loaded past its cores slows a
subject without ever turning it into a hang. Progress between two readings is any change of these, or
a process kept waiting:

  CPU ticks       utime + stime of each live process of the tree (the root and its descendants, from
                  the kernel's children lists) and of the children each has reaped (cutime + cstime),
                  summed: a process that ran, however little, moves it by a tick (1/CLK_TCK s)
  the tree        a process of it started or went: a teardown in steps is progress
  bytes moved     moved(), a counter its caller keeps of the subject's pipes (stdout bytes read,
                  stderr bytes written, what the scenario server logged of the host's messages)
  kept waiting    a process of the tree runnable (state R) at two readings in a row that did not sleep
                  in between (its voluntary context switches unchanged): runnable throughout, it wanted
                  the CPU, and its ticks standing still say the load kept it queued

What it rules out: a runnable process starved of CPU by the load reads no tick for a while, and a tick
is 10 ms of CPU: a spinner among dozens of runnable tasks, in a session that busy loops of sessions of
their own leave a third of the cores, can get less than that in a second (measured: a 1 s window read
idle). Runnable throughout, it keeps waiting, so the load's time does not count, however far apart the
probe's own readings came (the scheduler's account of a wait, schedstat's run_delay, is added only as
the wait ends, seconds late; a sleep between two readings is known at once). A process that sleeps
between two readings, however briefly it woke (a light poller, a timer), is not kept waiting, whatever
the load, so its window counts; a subject asleep on a timer of its own (a host's grace before SIGTERM)
reads no progress, and its grace counts. What it does not: a subject that wakes often but does nothing
(a busy poll loop) is progress; it is caught by the outer bound, OUTER_WINDOWS windows after the wait
began, where it is reported "busy", never a hang. Only a main thread's state is read (the same read as
its ticks; its status only when it is runnable): a starved thread beside a main thread asleep (a Python
worker thread while the main thread waits for the GIL; Node's, Go's and the JVM's workers) is left to its
ticks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Literal

from stdio_probe.core import sample

OUTER_WINDOWS = 6  # a window of no progress ends after this many windows of wall time, progress or not
READ_EVERY = 0.05  # seconds between two readings of the tree: short against any window, cheap against load

Over = Literal["idle", "busy"]


def _nothing() -> int:
    return 0


def tree(root: int) -> Callable[[], Iterable[int]]:
    """The pids of a process and its live descendants (the kernel's children lists), read anew at each call."""
    return lambda: (root, *sample.descendants(root))


class Clock:
    """Seconds since the processes pids() names last made progress; read on demand, at most every READ_EVERY s.

    The stretches without progress it has seen end (each gap between two progress readings longer than
    two readings) are kept, so a record can say how long the subject was idle between two of its events
    (idle_stretches, longest_idle), whatever the wait that was running then.
    """

    def __init__(self, pids: Callable[[], Iterable[int]], moved: Callable[[], int] = _nothing) -> None:
        self.pids, self.moved = pids, moved
        self._reading, self._runnable = self._read()
        self._read_t = self.progress_t = time.monotonic()
        self.stretches: list[tuple[float, float]] = []

    def _read(self) -> tuple[tuple[int, frozenset[int], int], dict[int, int]]:
        """(CPU ticks summed over the tree, its pids, bytes moved), and the sleeps so far of each pid whose main
        thread is runnable (sample.cpu_reading)."""
        pids = frozenset(self.pids())
        readings = {pid: sample.cpu_reading(pid) for pid in pids}
        ticks = sum(ticks for ticks, _ in readings.values())
        runnable = {pid: slept for pid, (_, slept) in readings.items() if slept is not None}
        return (ticks, pids, self.moved()), runnable

    def idle_s(self, since: float | None = None) -> float:
        """Seconds up to now without progress, counted from since at the earliest (the start of a window)."""
        now = time.monotonic()
        if now - self._read_t >= READ_EVERY:
            reading, runnable = self._read()
            kept_waiting = any(self._runnable.get(pid) == slept for pid, slept in runnable.items())
            if reading != self._reading or kept_waiting:
                if now - self.progress_t > 2 * READ_EVERY:
                    self.stretches.append((self.progress_t, now))
                self._reading, self.progress_t = reading, now
            self._runnable, self._read_t = runnable, now
        return now - max(self.progress_t, since if since is not None else self.progress_t)

    def over(self, since: float, window: float) -> Over | None:
        """Whether the window from since is over: "idle" once the subject made no progress for window s in a
        row, "busy" once OUTER_WINDOWS windows of wall time passed with progress throughout; None while it runs."""
        if self.idle_s(since) >= window:
            return "idle"
        if time.monotonic() - since >= OUTER_WINDOWS * window:
            return "busy"
        return None

    def idle_stretches(self, shortest: float) -> list[list[float]]:
        """The stretches without progress seen so far ([start, end], monotonic times) of shortest s or longer, the
        one still running up to the last reading: what a record keeps, for longest_idle."""
        stretches = [*self.stretches, (self.progress_t, self._read_t)]
        return [[round(a, 3), round(b, 3)] for a, b in stretches if b - a >= shortest]


def longest_idle(stretches: list[list[float]], start: float, end: float) -> float:
    """The longest of stretches (Clock.idle_stretches) between start and end (monotonic times), each clipped to them:
    how long a subject waited without progress between two of its events, whatever the wait running then."""
    return max((overlap(stretch, start, end) for stretch in stretches), default=0.0)


def overlap(stretch: list[float], start: float, end: float) -> float:
    """How much of a stretch ([a, b], monotonic times) lies between start and end."""
    return max(0.0, min(stretch[1], end) - max(stretch[0], start))

def outlived(survivors: Callable[[], list[dict]], grace: float) -> list[dict]:
    """What survivors() (live processes, each with its "pid") still lists once they made no progress for grace s
    in a row, read every READ_EVERY s; [] as soon as none is left. A survivor ending slowly on a loaded machine
    is given the time it makes progress in, OUTER_WINDOWS graces at most: one still alive then (busy or not)
    has outlived the grace."""
    found = survivors()
    clock = Clock(lambda: [p["pid"] for p in found])
    started = time.monotonic()
    while found and clock.over(started, grace) is None:
        time.sleep(READ_EVERY)
        found = survivors()
    return found

"""Watch a process after a trigger until it exits, a proof says it never will, or the window ends.

The server checks give it their server's no-progress clock (progress.Clock): their window then counts
only time in which the server made no progress, and a server still making progress OUTER_WINDOWS
windows after the trigger is decided "busy" (method.md, "The window rule"); without a clock (the
cases) the window is wall time.

Every probe that gives a process a trigger (stdin EOF, SIGTERM, SIGINT, its reader gone) and then
waits for the outcome waits here (L1, L12, S2, S8, S11 and the server checks' exit waits), so the
one rule holds everywhere: a defect that persists is called only on proof (hang.py, read by the
caller's prove) or after the whole window, never on a shorter grace. What this loop rules out:

  a wait that outlives the run     between two looks one wait of at most interval for the exit
                                   (it ends early when the process exits, so an exit is timed to
                                   the millisecond), and a run cut short (spawn.stopping) ends the
                                   watch: Ctrl-C is seen within interval plus one proof's bounded reading
  a proof that is one lucky reading  in_a_row proofs one after the other (a failed one resets the
                                   count), each taken interval apart
  an exit taken for a hang         the exit is looked at before each proof, and again once the
                                   loop has ended: a process that exits at the window's edge is
                                   recorded as exited (alive_at_decision false)

What it does not decide: what the outcome means (the probe's assess does), or what is proof (prove,
a hang.* proof: {"proven": bool, "why_not": str | None, ...}). The record keys it writes
(decided_by, decided_after_<trigger>_s, alive_at_decision, exit_after_<trigger>_s, proof,
proof_attempts) are those the stored results and every assess read.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Literal, Protocol

from stdio_probe.core import sample, spawn
from stdio_probe.core.progress import Clock, Over


class Polled(Protocol):
    """A process as subprocess.Popen and forkserver.ForkedProcess show it: poll() is its exit code, None while
    alive; wait(timeout) returns it, or raises subprocess.TimeoutExpired once timeout has passed."""

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


@dataclass
class Watched:
    """What one watch saw: why it stopped, when (seconds after the trigger), and the proofs it tried."""

    decided_by: Literal["exit", "proof", "window", "busy"]
    decided_after_s: float
    alive: bool
    proof: dict | None = None  # the last proof attempt, if any was made
    why_not: dict[str | None, int] = field(default_factory=dict)  # each attempt's why_not, counted

    @property
    def exit_after_s(self) -> float | None:
        """Seconds from the trigger to the exit seen, None while alive."""
        return None if self.alive else self.decided_after_s

    def record(self, trigger: str, proof_threads: bool = True) -> dict:
        """The arm record's keys for this watch, named after its trigger ("eof", "sigterm"); proof_threads
        False leaves the per-thread readings out of the proof (a server we did not write has many)."""
        observed = {
            "decided_by": self.decided_by,
            f"decided_after_{trigger}_s": self.decided_after_s,
            "alive_at_decision": self.alive,
            f"exit_after_{trigger}_s": self.exit_after_s,
        }
        if self.proof is not None:
            proof = self.proof if proof_threads else {k: v for k, v in self.proof.items() if k != "threads"}
            observed["proof"] = proof
            observed["proof_attempts"] = [{"why_not": why, "count": n} for why, n in self.why_not.items()]
        return observed


def watch(
    process: Polled,
    since: float,
    window: float,
    *,
    prove: Callable[[], dict] | None = None,
    in_a_row: int = 1,
    look: Callable[[], None] | None = None,
    interval: float = sample.SAMPLE_INTERVAL,
    clock: Clock | None = None,
) -> Watched:
    """Watch process from since (the trigger's monotonic time) for at most window seconds (with clock: a window
    of no progress, progress.Clock.over, decided "busy" at its outer bound).

    Each tick: the exit; then look() (a reading the caller keeps: /proc samples, CPU time); then
    prove() when given, stopping once in_a_row attempts in a row were proven; then a wait of at most
    interval for the exit, cut at the window's end.
    """
    decided_by: Literal["exit", "proof", "window", "busy"] = "window"
    proof, why_not, proven, over = None, {}, 0, None
    while not spawn.stopping() and (over := _over(clock, since, window)) is None:
        if process.poll() is not None:
            decided_by = "exit"
            break
        if look is not None:
            look()
        if prove is not None:
            proof = prove()
            why_not[proof["why_not"]] = why_not.get(proof["why_not"], 0) + 1
            proven = proven + 1 if proof["proven"] else 0
            if proven >= in_a_row:
                decided_by = "proof"
                break
        with suppress(subprocess.TimeoutExpired):  # never past the window: an exit after it is no exit within it
            process.wait(max(0.0, min(interval, window - (time.monotonic() - since))) if clock is None else interval)
    else:
        decided_by = "busy" if over == "busy" else "window"
    alive = process.poll() is None
    return Watched(decided_by, round(time.monotonic() - since, 3), alive, proof, why_not)


def _over(clock: Clock | None, since: float, window: float) -> Over | None:
    """Whether the window from since is over: wall time without a clock, else the clock's (progress.Clock.over)."""
    if clock is None:
        return "idle" if time.monotonic() - since >= window else None
    return clock.over(since, window)

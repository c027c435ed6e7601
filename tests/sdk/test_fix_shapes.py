"""Fixes in shapes the other tests do not cover, each checked to remove its defect: both methods must see it.

Each shape defeats a fast method that trusts a fork too far or a proof that overlooks a wake source
(tests/sdk_fixes.py, UNFORESEEN_FIXES): state that fork(2) drops, a subreaper client, a detached
waker, a helper that drops every marker (an orphan the probe adopts),
a delayed helper, a late-closing stream, a SIGINT handler set at import (undone by a fixture that
reset SIGINT after the import), a watchdog thread that keeps waking (refused by a trigger that waited for
every thread to idle), a wait on an armed timerfd in the event loop (L8, L10: the loop sleeps in epoll_wait
with no timeout); or one that takes a caller's bound for a proof
(LATE_FIXES): a decode error surfaced after 3 s (L5), a writer that serves again after 3 s (L7);
or one whose trigger the fast method's shorter wait would miss (GRACE_SHAPES): a client grace of 3 s
outlasting L11's 2.5 s tool (still reproduced), a client that waits for its server without a bound;
and a round for every case (FRESH_SHAPES) in mechanisms none of those use, fixes and shapes that only look like
one: an armed timerfd, a threading.Timer, a watchdog thread, SIGALRM by setitimer (the fixture's and the host's),
loop.call_later, a pidfd wait, a guard stack, a fd closed under a blocked write.
The fast run covers every case, so a fix that costs a fast path (fixtures exec'd, a proof withheld)
must leave the other cases reproduced. Of the shapes the fork server gives up on (EXECD), whose every arm is
exec'd with mcp's import (about 1 s of CPU each), one runs every case: the fast method with every fixture exec'd
is one mode whatever state made the fork server give up; the other runs its own case.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from stdio_probe.core import sample, spawn
from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.sdk.cases import CASES
from stdio_probe.sdk.cases.l11_lifespan_cleanup import TOOL_S
from tests.proof_readings import proof_readings
from tests.sdk_fixes import FRESH_SHAPES, GRACE_SHAPES, LATE_FIXES, UNFORESEEN_FIXES, patched_sdk

WINDOW = Options(method="window", window=5.0)  # the window method, with a shorter window than the default 10 s
# what else a shape fixes: the delayed helper's SIGTERM to the server's group also ends what a server that
# exited by itself left there (L9), as FIX_L9_BEFORE_WAIT does at once; both methods see it
ALSO_FIXES = {"L10-delayed-helper": {"L9"}}
EXECD = {"L1-import-posix-timer": "POSIX timer", "L9-subreaper-client": "child-subreaper flag"}
EVERY_CASE_EXECD = "L1-import-posix-timer"  # the EXECD shape run with every case (the module's docstring)
SHAPES = {**UNFORESEEN_FIXES, **LATE_FIXES}
EDITS = {**SHAPES, **{name: edits for name, (edits, _) in (GRACE_SHAPES | FRESH_SHAPES).items()}}
SHAPES_AT_ONCE = 4  # fresh shapes whose runs go on side by side (each its own arms, in parallel in the fast method)


@pytest.fixture(scope="session")
def shaped(pinned, tmp_path_factory):
    """shaped(name) -> the pinned SDK with that shape (SHAPES, GRACE_SHAPES), copied once per xdist worker that needs it
    (a copy takes a second): the session scope leaves the shapes' tests ungrouped, free to spread over workers."""
    made: dict = {}

    def make(name: str):
        if name not in made:
            made[name] = patched_sdk(tmp_path_factory.mktemp("sdk"), f"shape-{name}", EDITS[name], pinned)
        return made[name]

    return make


@pytest.mark.slow(50)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_fast_method_sees_the_fix_and_the_other_cases_still_reproduce(shape, shaped):
    fixed_case = shape.split("-")[0]
    cases = list(CASES) if shape not in EXECD or shape == EVERY_CASE_EXECD else [fixed_case]
    runs = run_matrix([shaped(shape)], cases, Options())
    for run in runs:
        fixed = run["case"] == fixed_case or run["case"] in ALSO_FIXES.get(shape, ())
        expected = "not_reproduced" if fixed else "reproduced"
        assert run["verdict"] == expected, (run["case"], run["reason"])
    if shape in EXECD:  # the fork server gave up on that SDK: every arm was exec'd, and says why
        for run in runs:
            for arm in run["arms"].values():
                assert arm.get("launch") in ("exec", None), (run["case"], arm.get("launch"))
                if "launch" in arm:
                    assert EXECD[shape] in arm["fork_server_unavailable"], arm["fork_server_unavailable"]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_window_method_sees_the_fix(shape, shaped):
    fixed_case = shape.split("-")[0]
    [run] = run_matrix([shaped(shape)], [fixed_case], WINDOW)
    assert run["verdict"] == "not_reproduced", run["reason"]


@pytest.mark.slow(40)
@pytest.mark.parametrize("options", [Options(), WINDOW], ids=["fast", "window"])
@pytest.mark.parametrize("shape", list(GRACE_SHAPES))
def test_l11_reads_the_same_with_both_methods_whatever_the_grace(shape, options, shaped):
    """Only L11: the unbounded wait would change what the cases that leave a server running observe."""
    [run] = run_matrix([shaped(shape)], ["L11"], options)
    assert run["verdict"] == GRACE_SHAPES[shape][1], run["reason"]
    bug, control, mitigated = (run["arms"][arm] for arm in ("bug", "control", "mitigated"))
    assert bug["tool_s"] == options.window, "the bug arm's tool lasted the window: it outlasted the grace"
    if options.method == "fast":  # the 2.5 s tool ended inside the grace, the cleanup after it: no trigger
        assert bug["first_attempt"]["tool_s"] == TOOL_S, bug["first_attempt"]
        assert "tool finished" in bug["first_attempt"]["outcome"], bug["first_attempt"]
    assert "first_attempt" not in control and "first_attempt" not in mitigated


def test_a_helper_without_the_runs_marker_is_adopted_refuses_the_proof_and_is_reaped(shaped):
    """L1-unmarked-helper: the helper drops the environment and leaves for a session of its own. The probe, a child
    subreaper, adopts it, so the proof is refused while it lives (the arm's evidence says why), and it is reaped
    once done: no child of this process is left, alive or a zombie."""
    [run] = run_matrix([shaped("L1-unmarked-helper")], ["L1"], Options())
    assert run["verdict"] == "not_reproduced", proof_readings(run)
    refused = [attempt["why_not"] or "" for attempt in run["arms"]["bug"]["proof_attempts"]]
    assert any("adopted by the probe, carrying no marker of the run" in why for why in refused), refused
    deadline = time.monotonic() + 60  # a safety net: the last orphan's reaping ends the wait, not a clock
    while spawn.run_processes() and time.monotonic() < deadline:  # each scan reaps the orphans that have ended
        time.sleep(0.05)
    assert spawn.run_processes() == []
    assert sample.children(os.getpid(), exited=True) == sample.children(os.getpid()), "a zombie child is left"


@pytest.mark.slow(150)
@pytest.mark.parametrize("options", [Options(), WINDOW], ids=["fast", "window"])
def test_fresh_shapes_read_the_same_with_both_methods(options, shaped):
    """Every FRESH_SHAPES shape, its own case only (a shape may fix others too: L13's timer ends L12's server),
    SHAPES_AT_ONCE at a time: each must read what its hand check found, fixed or not, in either method."""
    shapes = list(FRESH_SHAPES)
    sdks = {name: shaped(name) for name in shapes}  # copied here: the workers share the fixture's cache

    def run(name: str) -> dict:
        [found] = run_matrix([sdks[name]], [name.split("-")[0]], options)
        return found

    with ThreadPoolExecutor(max_workers=SHAPES_AT_ONCE) as pool:
        runs = dict(zip(shapes, pool.map(run, shapes), strict=True))
    wrong = {name: proof_readings(found) for name, found in runs.items() if found["verdict"] != FRESH_SHAPES[name][1]}
    assert not wrong, wrong

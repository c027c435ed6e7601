"""The probe's own fixture server and fixture host as command lines, and the fixture server's defect shapes: what
the tests of several tiers start as a server or a host under test."""

from __future__ import annotations

import shlex
import sys

from stdio_probe.core import spawn
from stdio_probe.server.checks import CHECKS
from tests.paths import TESTS

HOSTILE = TESTS / "hostile_server.py"
FIXTURE = spawn.FIXTURES / "fixture_check_server.py"

WINDOW = 3.0

# A wait on a subject that makes progress throughout (a flood, a spin) ends at the outer bound, progress.OUTER_WINDOWS
# windows of wall time (6 s here): such runs take this window, whose length their verdicts do not depend on, and each of
# their waits costs a core of the server's and about one of the probe's reading it. Never a run where the subject
# sleeps as long (the slow call sleeps 0.5 s): a window counts only time without progress. Not shorter: a server's
# start-up is progress too, and its wait for the answer to initialize ends at the same outer bound, which 0.5 s
# windows (3 s) made shorter than a start on a loaded machine (a fresh clone's flood test at a load of 30: no answer).
BUSY_WINDOW = 1.0

OK = "not_reproduced"

BUG = "reproduced"

WELL = dict.fromkeys(CHECKS, OK)


def command(*flags: str) -> str:
    return " ".join([sys.executable, str(FIXTURE), *flags])


SLOW = ("slow", {"seconds": 0.5})


SHAPES = {
    "well-behaved": ((), WELL),
    # S8 ends with EOF too; S10 has no ending to judge; S13's control, EOF after the answer, does not exit either
    "no exit on EOF": (
        ("--no-exit-on-eof",),
        WELL | {"S1": BUG, "S2": "inconclusive", "S8": BUG, "S10": "inconclusive", "S13": "inconclusive"},
    ),
    "ignores SIGTERM": (("--ignore-sigterm",), WELL | {"S3": BUG, "S11": BUG}),
    "banner on stdout": (("--banner",), WELL | {"S4": BUG}),
    "leaves a child": (("--leave-child",), WELL | {"S5": BUG}),
    "leaves a child in a new session": (("--leave-child", "--child-new-session"), WELL | {"S5": BUG}),
    # S12's marker goes unanswered after its line of invalid JSON: no evidence
    "dies on bad input": (("--die-on-bad-input",), WELL | {"S6a": BUG, "S6b": BUG, "S12": "inconclusive"}),
    "dies on invalid UTF-8 only": (("--die-on-bad-utf8",), WELL | {"S6b": BUG}),
    "mute after invalid JSON only": (("--mute-on-bad-json",), WELL | {"S6a": BUG, "S12": "inconclusive"}),
    "large answer blocks the reading": (("--blocking-writes",), WELL | {"S2": BUG}),
    # S2 not judged: when the 35-byte line is still in the pipe, it takes a pipe buffer of its own and the large
    # answer never fills the pipe's bytes (inconclusive); read before the reader paused, it is not_reproduced
    "answers a notification": (("--answer-notifications",), WELL | {"S4": BUG, "S2": None}),
    "drops answers at EOF": (("--drop-at-eof",), WELL | {"S7": BUG, "S13": BUG}),
    "spins when the reader is gone": (("--spin-on-epipe",), WELL | {"S8": BUG}),
    "ignores SIGINT": (("--ignore-sigint",), WELL | {"S9": BUG}),
    "traceback at EOF": (("--traceback-at-eof",), WELL | {"S10": BUG}),
    "SIGTERM waits for the unread answer": (("--drain-on-sigterm",), WELL | {"S11": BUG}),
    "drops invalid requests": (("--drop-invalid",), WELL | {"S12": BUG}),
    "cancels a call in flight at EOF": (("--cancel-at-eof",), WELL | {"S13": BUG}),
    "a call in flight at EOF keeps it alive": (("--stuck-at-eof",), WELL | {"S13": BUG}),
    "a signal aborts it": (("--abort-on-signal",), WELL | {"S11": BUG, "S14": BUG}),
}


# per shape, the checks it keeps making progress to the outer bound (its spin burns a core all the while)
BUSY_CHECKS = {"spins when the reader is gone": ("S8",)}


def shape_windows(shape: str) -> list[tuple[list[str], float]]:
    """The runs of a shape's checks, each (checks, window): those it keeps busy (BUSY_CHECKS) with BUSY_WINDOW,
    the rest with WINDOW."""
    busy = BUSY_CHECKS.get(shape, ())
    rest = [check for check in CHECKS if check not in busy]
    return [(rest, WINDOW), *([(list(busy), BUSY_WINDOW)] if busy else [])]


def fixture_host(*flags: str) -> str:
    return shlex.join([sys.executable, str(TESTS / "hosts" / "fixture_host.py"), *flags, "--"]) + " {server}"

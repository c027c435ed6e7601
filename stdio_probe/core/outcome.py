"""What a run can come to, and what each outcome means to every reader of it: one enum, one table.

A verdict is an Outcome, a host contract's status a Contract: str enums, so results.json holds the
same words as ever and a verdict read from a file compares equal to its member. What a verdict means
for the process's exit code, JUnit, a GitHub annotation, the pytest plugin and the report is read from
MEANING, never decided again where it is shown; what an unmet expectation means, from UNMET. A new
outcome is a row here, and a test checks every table covers every member.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    """A verdict (decide.py's rule)."""

    REPRODUCED = "reproduced"  # the bug arm shows the defect, the control arm does not
    NOT_REPRODUCED = "not_reproduced"  # neither shows it
    INCONCLUSIVE = "inconclusive"  # an arm without evidence, or the control shows the defect too
    ERROR = "error"  # an arm failed: the probe could not run it, or the subject could not start
    NOT_APPLICABLE = "not_applicable"  # the subject lacks what the probe needs


class Contract(StrEnum):
    """Whether the host contract held on the mitigated arm (decide.mitigation): beside the verdict, never in it."""

    HELD = "held"
    NOT_HELD = "not_held"
    NOT_APPLICABLE = "not_applicable"  # the case or its mitigated arm does not apply (the note says why)
    NOT_EVALUATED = "not_evaluated"  # the case applies, but the mitigated arm failed or showed nothing


class Unmet(StrEnum):
    """How a run (or an entry of the file) fails --expect (expect.problems)."""

    MISMATCH = "mismatch"  # the run's verdict is not the one expected
    UNDECIDED = "undecided"  # the probe could not decide, and the file does not expect exactly that
    STALE = "stale"  # an entry of a case this invocation ran that no run checked


EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_UNDECIDED = 0, 1, 2, 3  # a signal's, 130 and 143: start.CODES
EXIT_INTERNAL = 4  # the probe itself failed (a full disk, a closed stdout, a bug): never 1, which is "mismatch"
# --bisect speaks git bisect run: 0 good, 1 bad, 125 skip (cannot tell), above 127 abort the bisection.
BISECT_GOOD, BISECT_BAD, BISECT_SKIP, BISECT_ABORT = 0, 1, 125, 128


@dataclass(frozen=True)
class Meaning:
    """What one verdict means to each reader.

    defect: whether the verdict says the defect is there (None: it says nothing of it); unmet: the problem
    it makes where --expect wants another verdict, or where nothing is expected of it and it is undecided
    (UNMET gives that problem's exit code, JUnit element and annotation); bisect: --bisect's exit code
    (None: as --bisect-na says); junit: its testcase's element without --expect (None: the testcase passes);
    pytest: the plugin's result for the test where no expectation names the check; word (at most three
    characters, so twelve cases fit beside a subject in 80 columns), style and emoji: how the report, the
    matrix and the job summary show it.
    """

    defect: bool | None
    unmet: Unmet
    bisect: int | None
    junit: str | None
    pytest: str
    word: str
    style: str
    emoji: str

    @property
    def decided(self) -> bool:
        """False where the probe could not decide (error, inconclusive)."""
        return self.unmet is not Unmet.UNDECIDED


MEANING = {
    Outcome.REPRODUCED: Meaning(True, Unmet.MISMATCH, BISECT_BAD, "failure", "failed", "bug", "bold red", "🔴"),
    Outcome.NOT_REPRODUCED: Meaning(False, Unmet.MISMATCH, BISECT_GOOD, None, "passed", "ok", "green", "🟢"),
    Outcome.INCONCLUSIVE: Meaning(None, Unmet.UNDECIDED, BISECT_SKIP, "error", "error", "?", "yellow", "🟡"),
    Outcome.ERROR: Meaning(None, Unmet.UNDECIDED, BISECT_SKIP, "error", "error", "ERR", "bold magenta", "🟣"),
    Outcome.NOT_APPLICABLE: Meaning(None, Unmet.MISMATCH, None, "skipped", "passed", "n/a", "dim", "⚪"),
}


@dataclass(frozen=True)
class Consequence:
    """What an unmet expectation means: the process's exit code, the JUnit element of its testcase, the level
    and title of its GitHub annotation, the pytest plugin's result for the test."""

    exit_code: int
    junit: str
    annotation: str
    title: str
    pytest: str


UNMET = {
    Unmet.MISMATCH: Consequence(EXIT_MISMATCH, "failure", "error", "verdict mismatch", "failed"),
    Unmet.UNDECIDED: Consequence(EXIT_UNDECIDED, "error", "error", "probe could not decide", "error"),
    Unmet.STALE: Consequence(EXIT_MISMATCH, "failure", "error", "stale expectation", "failed"),
}


def exit_code(unmet: set[Unmet]) -> int:
    """The exit code of a run that fails these expectations: a verdict that differs outranks one the probe
    could not decide (what changed is what a gate must report first); EXIT_OK when every one is met."""
    codes = {UNMET[kind].exit_code for kind in unmet}
    return next((code for code in (EXIT_MISMATCH, EXIT_UNDECIDED) if code in codes), EXIT_OK)


@dataclass(frozen=True)
class Status:
    """How the report shows a host contract's status: its words, in rich markup, in the job summary; its mark
    in the matrix (and that mark's style), and whether it fails a testcase of its own in JUnit."""

    words: str
    markup: str
    markdown: str
    mark: str
    mark_style: str
    fails: bool


CONTRACT = {
    Contract.HELD: Status("held", "[green]held[/]", "held", "", "", False),
    Contract.NOT_HELD: Status("not held", "[bold red]not held[/]", "**not held**", "!", "bold red", True),
    Contract.NOT_EVALUATED: Status(
        "not evaluated", "[bold yellow]not evaluated[/]", "**not evaluated**", "*", "bold yellow", True
    ),
    Contract.NOT_APPLICABLE: Status("n/a", "[dim]n/a[/]", "n/a", "", "", False),
}

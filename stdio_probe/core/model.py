"""Plain data shared by the runner and the probes, and the contract every probe module fulfils."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stdio_probe.report.record import ArmRecord


@dataclass(frozen=True)
class Options:
    """How arms run: the observation window (seconds) and the method.

    method "fast" stops waiting on kernel proof or an observed event;
    "window" reproduces the article: 2 s before EOF, the whole window, in sequence.
    """

    window: float = 10.0
    method: str = "fast"


@dataclass(frozen=True)
class Sdk:
    """An SDK under test: the interpreter that has it, extra environment, and its facts."""

    spec: str
    python: str
    env: dict[str, str] = field(default_factory=dict)
    facts: dict = field(default_factory=dict)


BRIEF_CHARS = 42  # the evidence column of the 80-column summary


def shorten(text: str, limit: int = BRIEF_CHARS) -> str:
    """text cut at a word boundary to at most limit characters, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}…"


# what no output may hold raw: C0 controls but tab and newline, ESC among them; DEL and C1 (a terminal reads
# \x9b as ESC [); lone surrogates (invalid UTF-8 read with surrogateescape, or a JSON \ud800), which
# UTF-8 cannot encode; U+FFFE and U+FFFF. XML 1.0 forbids most of them even as character references.
UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def parent_of(process: dict) -> str:
    """A survivor's parent as a note says it: "adopted by the probe" where the probe, a child subreaper
    (spawn.adoption_refused), took it in when its own parent died (the kernel gives such an orphan to the nearest
    subreaper, else to init: "parent 1"), else "parent PID"."""
    return "adopted by the probe" if process.get("adopted") else f"parent {process['ppid']}"


def printable(text: str) -> str:
    """text with each character of UNPRINTABLE as a visible escape (\\x1b, \\udcff): the one escaping of every
    writer (the report, -v, the live view, JUnit, SVG, the job summary and annotations)."""
    return UNPRINTABLE.sub(_escape, text)


def _escape(found: re.Match) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable_all(value: Any) -> Any:
    """A copy of a results document (or loaded expectations, keyed by tuples) with every string, keys
    included, made printable."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_all(key): printable_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(printable_all(item) for item in value)
    return value


@dataclass(frozen=True)
class Finding:
    """What one arm's record says about the defect: shown True/False, or None for no evidence.

    note is the full account (the reason, -v); short is the decisive evidence in a few words
    (the 80-column summary). A case that gives no short gets its note, cut.
    """

    shown: bool | None
    note: str
    short: str = ""

    @property
    def brief(self) -> str:
        return shorten(self.short or self.note)


@dataclass(frozen=True)
class ChildEnv:
    """What a server (or host) under test gets of the probe's environment beyond a host's defaults.

    values: the variables given with --env (resolved; their values are never recorded, only their
    names); inherit: --inherit-env, the probe's whole environment (unsafe where it holds secrets).
    """

    values: dict[str, str] = field(default_factory=dict, repr=False)
    inherit: bool = False

    def described(self) -> dict:
        """What results.json says of it: the names and whether everything was inherited."""
        return {"names": sorted(self.values), "inherit": self.inherit}


@dataclass(frozen=True)
class Server:
    """A stdio server under the server checks: its label (the run's subject), command line, large and slow call.

    large_call is (tool, arguments): a tools/call whose answer is larger than the pipe (S2).
    slow_call is (tool, arguments): a tools/call that takes time to answer, 0.5 s or more (S13).
    protocol is the era the checks speak to it (eras.LEGACY or a modern version): given by
    --protocol, else None until the runner found it (checks.session.find_era).
    env is what it gets of the probe's environment beyond a host's defaults.
    sequential_arms: its arms run one at a time (--sequential-arms); by default side by side, each start in a
    sandbox of its own (spawn.Sandbox), checked against a rerun one at a time (runner.Servers.reruns).
    """

    label: str
    command: str
    large_call: tuple[str, dict] | None = None
    protocol: str | None = None
    env: ChildEnv = field(default_factory=ChildEnv)
    sequential_arms: bool = False
    slow_call: tuple[str, dict] | None = None


@dataclass(frozen=True)
class Host:
    """A stdio host under the host checks: its label (the run's subject), command line with a {server} word,
    and what it gets of the probe's environment beyond a host's defaults (--env, --inherit-env)."""

    label: str
    command: str
    env: ChildEnv = field(default_factory=ChildEnv)


# bug and control decide a case's verdict; mitigated is the bug's trigger with the host contract applied
CASE_ARMS = ("bug", "control", "mitigated")


@dataclass(frozen=True)
class Probe:
    """What the runner and decide know of a probe (an SDK case, a server check or a host check).

    Every probe module exports one as PROBE; the registries (cases.CASES, checks.CHECKS, hosts.HOST_CHECKS) map its
    id to it. arms are run in this order; slow_arms (long fixed waits, or a host check's wait on the hang most hosts
    show) are queued before all others. pairs names a second bug/control pair judged by the same rule
    (decide.decide), never changing the verdict. needs maps an arm to the rule that says, from its record, what the
    subject lacks for the probe (the arm then becomes not_applicable). trials: how many times at most each arm's
    trigger is tried (runner.run_trials), for a check whose defect can hide in one run: again until a trial shows it
    (checks.session.RATE_TRIALS, and opened's "k of N"), unless settles says why a trial that did not show it leaves
    no run of the race that could (its outcome is not the one the race hides the defect behind: the trials end
    there). same_arms maps an arm to another probe's arm that is the same trigger and observation, so that where
    both run, one start of the subject serves both (runner.Servers: the arm's record is the other's, and the run
    says so). run_arm spawns and returns the arm's record; assess is pure: it reads a record that carries neither
    error nor not_applicable (every caller filters those) and says what it shows.
    """

    id: str
    title: str
    arms: tuple[str, ...]
    run_arm: Callable[[str, Any, Options], ArmRecord]
    assess: Callable[[ArmRecord], Finding]
    slow_arms: tuple[str, ...] = ()
    pairs: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    needs: Mapping[str, Callable[[ArmRecord], str | None]] = field(default_factory=dict)
    trials: int = 1
    settles: Callable[[ArmRecord], str | None] | None = None
    same_arms: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def run(self, arm: str, subject: Any, options: Options) -> ArmRecord:
        """run_arm, then the arm's needs rule: a record showing the subject lacks what the probe needs
        says so in not_applicable (unless it already does)."""
        record = self.run_arm(arm, subject, options)
        rule = self.needs.get(arm)
        if rule is not None and not record.get("not_applicable") and (lacking := rule(record)):
            record["not_applicable"] = lacking
        return record

    def note(self, record: ArmRecord) -> str:
        """The one-line account of an arm: why it did not run or could not apply, else what it showed."""
        return record.get("not_applicable") or record.get("error") or self.assess(record).note


def registry(package: str, modules: Iterable[str]) -> dict[str, Probe]:
    """id -> PROBE of each of package's modules, in the order named: a kind's one list of probes
    (cases.CASES, checks.CHECKS, hosts.HOST_CHECKS), named once rather than imported and listed again."""
    probes = (importlib.import_module(f"{package}.{module}").PROBE for module in modules)
    return {probe.id: probe for probe in probes}

"""The pytest plugin: server (and host) checks from a project's own test suite.

    def test_lifecycle(stdio_probe):
        stdio_probe.server("python my_server.py").assert_ok()

Active only when used: pytest loads it through the `pytest11` entry point, and it adds one
fixture and two hooks and nothing else; a test that does not ask for `stdio_probe` runs nothing
of the probe. Each call runs the probe's command line in a child process (`python -m stdio_probe`,
the interpreter running pytest): the probe bounds every wait, reaps every process it started and
writes results.json into the test's own tmp_path, so pytest's process never holds a server. The
outcome follows pytest's words: a check that shows its defect fails the test (unless declared
expected), a run the probe could not decide errors it, and a run that left a process alive fails it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL

import pytest

from stdio_probe.core.host_contract import Pidfd
from stdio_probe.core.outcome import MEANING, UNMET
from stdio_probe.report import expect, record

CHILD_TERM_GRACE = 5.0  # after SIGTERM the probe reaps what it started and exits 143 well within this
UNDECIDED_MARK = "stdio_probe_undecided"
STDERR_TAIL = 4096


class ProbeUndecided(Exception):
    """The probe could not decide a check (error, inconclusive) or could not run at all: the test errors."""


@dataclass(frozen=True)
class CheckRun:
    """One check's outcome on one subject, as results.json has it."""

    case: str
    subject: str
    verdict: str
    headline: str
    reason: str

    @property
    def line(self) -> str:
        """The summary line: case, verdict, decisive evidence."""
        return f"{self.case} {self.verdict}: {self.headline}"


@dataclass(frozen=True)
class ProbeResult:
    """A finished probe run: its checks, how many processes it had to reap at the end, its results file."""

    runs: tuple[CheckRun, ...]
    leftover_processes: int
    results_path: Path
    document: dict = field(repr=False)

    def verdicts(self) -> dict[str, str]:
        """check id -> verdict (one subject per call, so one verdict per check)."""
        return {run.case: run.verdict for run in self.runs}

    def assert_ok(self, expected: Mapping[str, str] | None = None) -> None:
        """Fail on every defect shown (beyond those declared expected) and on processes left alive;
        raise ProbeUndecided (the test errors) where the probe could not decide and that was not expected.

        expected maps a check id to the verdict accepted for it, as an --expect file does:
        {"S2": "reproduced"} accepts that defect; an entry that no check ran is stale, a failure.
        """
        __tracebackhide__ = True  # the failure is the subject's: pytest shows the test's line, not this one
        runs = self.document["runs"]
        ids = list(dict.fromkeys(run["case"] for run in runs))
        entries = expect.parse(dict(expected or {}), "expected")
        problems = expect.problems(entries, runs, ids)
        accepted = {case for case, _ in entries}
        failures = [p.line for p in problems if UNMET[p.kind].pytest == "failed"]
        failures += [r.line for r in self.runs if MEANING[r.verdict].pytest == "failed" and r.case not in accepted]
        if self.leftover_processes:
            failures.append(f"{self.leftover_processes} processes outlived their checks (the probe reaped them)")
        where = f"(results: {self.results_path})"
        if failures:
            subjects = ", ".join(dict.fromkeys(r.subject for r in self.runs))
            raise AssertionError(f"stdio probe on {subjects}: {where}" + "".join(f"\n  {line}" for line in failures))
        undecided = [p.line for p in problems if UNMET[p.kind].pytest == "error"]
        if undecided:
            raise ProbeUndecided("stdio probe could not decide " + where + "".join(f"\n  {u}" for u in undecided))


class StdioProbe:
    """The fixture's object: runs the probe on a server (or a host) command and returns its results."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def server(
        self,
        command: str,
        *,
        only: str | Sequence[str] | None = None,
        large_call: str | None = None,
        method: str = "fast",
        window: float | None = None,
        args: Sequence[str] = (),
    ) -> ProbeResult:
        """The server checks (S1...) on a stdio server command line (split as a shell would).

        large_call is 'TOOL {JSON arguments}', a call whose answer is larger than the pipe;
        args are further probe options, e.g. ("--env", "NAME").
        """
        argv = ["--server", command] + (["--large-call", large_call] if large_call else [])
        return self._run(argv, only, method, window, args)

    def host(
        self,
        command: str,
        *,
        only: str | Sequence[str] | None = None,
        method: str = "fast",
        window: float | None = None,
        args: Sequence[str] = (),
    ) -> ProbeResult:
        """The host checks (H1...) on a host command line with a {server} word, where the probe's server goes."""
        return self._run(["--host", command], only, method, window, args)

    def _run(
        self,
        subject: list[str],
        only: str | Sequence[str] | None,
        method: str,
        window: float | None,
        args: Sequence[str],
    ) -> ProbeResult:
        self.count += 1
        out = self.directory / f"stdio-probe-{self.count}.json"
        argv = [*subject, "--out", str(out), "--method", method, *args]
        if only:
            argv += ["--only", only if isinstance(only, str) else ",".join(only)]
        if window is not None:
            argv += ["--window", str(window)]
        code, stderr = _run_probe(argv)
        if code in (130, 143):
            raise KeyboardInterrupt(f"the probe was interrupted (exit {code})")
        if code != 0 or not out.exists():
            last = stderr.strip().splitlines()[-1:] or ["no output"]
            raise ProbeUndecided(f"the probe could not run (exit {code}): {last[0]}")
        document = record.read(out)
        runs = tuple(
            CheckRun(run["case"], record.subject(run), run["verdict"], run["headline"], run["reason"])
            for run in document["runs"]
        )
        return ProbeResult(runs, document["metadata"]["leftover_processes"], out, document)


def _run_probe(argv: list[str]) -> tuple[int, str]:
    """python -m stdio_probe ARGV in the foreground process group (so Ctrl-C reaches it and it reaps);
    if pytest itself is interrupted, the probe gets SIGTERM and a bounded wait, as a host would give it.
    Its stderr (one line on a failure) goes to a file, of which the last STDERR_TAIL bytes are kept."""
    command = [sys.executable, "-m", "stdio_probe", *argv]
    # the probe this pytest imported, installed or not (a checkout's tests run it from the source tree)
    paths = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    with tempfile.TemporaryFile() as stderr, subprocess.Popen(command, stdout=DEVNULL, stderr=stderr, env=env) as child:
        pidfd = Pidfd.open(child.pid)  # our child, not waited for: signalled through it, never by a reused pid
        try:
            child.wait()
        except BaseException:
            if pidfd is not None:
                pidfd.signal(signal.SIGTERM)
            try:
                child.wait(CHILD_TERM_GRACE)
            except subprocess.TimeoutExpired:
                if pidfd is not None:
                    pidfd.signal(signal.SIGKILL)
            raise
        finally:
            if pidfd is not None:
                pidfd.close()
        stderr.seek(max(0, stderr.seek(0, os.SEEK_END) - STDERR_TAIL))
        return child.returncode, stderr.read().decode("utf-8", "replace")


@pytest.fixture
def stdio_probe(tmp_path: Path) -> StdioProbe:
    """Run the stdio lifecycle probe's server or host checks; results files go to the test's tmp_path."""
    return StdioProbe(tmp_path)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(ProbeUndecided):
        report.user_properties.append((UNDECIDED_MARK, True))
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """A run the probe could not decide is an error of the test, not a failure of the subject."""
    if report.when == "call" and report.failed and (UNDECIDED_MARK, True) in report.user_properties:
        return "error", "E", "ERROR"
    return None


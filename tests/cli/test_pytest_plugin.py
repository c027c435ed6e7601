"""The pytest plugin, as a server author's own test suite meets it (pytester): real probe runs against
the stdlib check server (fixtures/fixture_check_server.py), well behaved or with one defect."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from stdio_probe.cli.pytest_plugin import CheckRun, ProbeResult, ProbeUndecided
from stdio_probe.core import spawn
from tests.paths import TESTS

pytest_plugins = ["pytester"]

SERVER = [sys.executable, str(spawn.FIXTURES / "fixture_check_server.py")]


def _server(*flags: str) -> str:
    return shlex.join([*SERVER, *flags])


@pytest.fixture(autouse=True)
def plugin_by_name_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The author's runs load the plugin by name (-p) only: a checkout pip-installed in place keeps an egg-info
    whose pytest11 entry point would register the same module again, under the entry point's name."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_author=f"def test_lifecycle(stdio_probe):\n    {body}\n")
    quiet = "ignore::pytest.PytestAssertRewriteWarning"  # this module imported the plugin first
    return pytester.runpytest("-p", "stdio_probe.cli.pytest_plugin", "-q", "-W", quiet)


HOST = [sys.executable, str(TESTS / "hosts" / "fixture_host.py")]


def _host(*flags: str) -> str:
    return shlex.join([*HOST, *flags, "--"]) + " {server}"


@pytest.mark.parametrize(
    "call", [f"server({_server()!r}, only='S1,S3,S4'", f"host({_host()!r}, only='H1,H5'"], ids=["server", "host"]
)
def test_a_well_behaved_subject_passes(pytester, call):
    result = _run(pytester, f"stdio_probe.{call}, window=3).assert_ok()")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("call", "lines", "passing"),
    [
        (
            f"server({_server('--ignore-sigterm')!r}, only='S1,S3'",
            [r".*stdio probe on .*: \(results: .*stdio-probe-1\.json\)", r".*S3 reproduced: "],
            "S1 ",
        ),
        (f"host({_host('--hang-on-dead-server')!r}, only='H1,H5'", [r".*H5 reproduced: "], "H1 "),
    ],
    ids=["server", "host"],
)
def test_a_defect_fails_the_test_with_its_summary_line(pytester, call, lines, passing):
    result = _run(pytester, f"stdio_probe.{call}, window=3).assert_ok()")
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines(lines)
    assert passing not in result.stdout.str()  # only the defect is listed


def test_a_defect_declared_expected_passes(pytester):
    call = f"stdio_probe.server({_server('--ignore-sigterm')!r}, only='S1,S3', window=3)"
    result = _run(pytester, f"{call}.assert_ok(expected={{'S3': 'reproduced'}})")
    result.assert_outcomes(passed=1)


def test_an_expected_defect_that_is_gone_fails_as_stale_or_mismatch(pytester):
    call = f"stdio_probe.server({_server()!r}, only='S3', window=3)"
    result = _run(pytester, f"{call}.assert_ok(expected={{'S3': 'reproduced'}})")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*S3 on *: expected reproduced, got not_reproduced*"])


def test_an_undecided_run_errors_the_test(pytester):
    silent = shlex.join(["sh", "-c", "exec cat >/dev/null"])  # never answers initialize
    result = _run(pytester, f"stdio_probe.server({silent!r}, only='S1', window=2).assert_ok()")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*could not decide*", "*S1 on sh: *no answer to initialize*"])


def test_bad_input_errors_the_test_with_the_probes_line(pytester):
    result = _run(pytester, "stdio_probe.server('no-such-server-program --stdio')")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*could not run (exit 2): error: --server*no-such-server-program not found*"])


def _stored(leftover: int, verdict: str = "not_reproduced") -> ProbeResult:
    run = {"case": "S1", "server": {"label": "x"}, "verdict": verdict, "reason": "r", "headline": "h"}
    document = {"runs": [run], "metadata": {"leftover_processes": leftover}}
    return ProbeResult((CheckRun("S1", "x", verdict, "h", "r"),), leftover, Path("r.json"), document)


def test_a_run_that_left_a_process_alive_fails():
    with pytest.raises(AssertionError, match="1 processes outlived their checks"):
        _stored(1).assert_ok()
    _stored(0).assert_ok()


def test_undecided_is_its_own_exception_not_an_assertion():
    with pytest.raises(ProbeUndecided, match="S1 on x: no expectation, got inconclusive"):
        _stored(0, "inconclusive").assert_ok()



"""Shared fixtures: the pinned SDK, its fixed copies, one real run of every case on it, and a guard against
leaked processes; and the grouping that lets pytest-xdist (`-n 4 --dist loadgroup`) make each shared run once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId

from stdio_probe.core import spawn
from stdio_probe.core.runner import run_matrix
from stdio_probe.sdk import envs, index
from stdio_probe.sdk.sdk import Request, resolve
from stdio_probe.sdk.sdk import pinned as pinned_sdk
from tests import stored_index
from tests.sdk_fixes import BREAKS, FIXES, OTHER_FIXES, patched_sdk

ROOT = Path(__file__).resolve().parent.parent
# what a build reads from the checkout: no environments, caches, build leftovers or results
NOT_SOURCES = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", "results*")
WIDTH = 80  # the terminal the CLI runs in, where the tests read what a person reads
# Session fixtures that make a costly run which several tests read. Under xdist each worker has its own
# session, so every test using one is put in one xdist group (one worker): the run is made once.
SHARED_RUNS = {"pinned_run", "shards"}


def pytest_configure(config: pytest.Config) -> None:
    """SIGINT deliverable however the suite was started: a shell starts a background job (`cmd &`, nohup) with SIGINT
    ignored, which every process the tests start would inherit (a server's SIGINT, the probe's Ctrl-C, a fixture's
    handler set at import), and the tests would read the shell's choice, not the probe. SIGQUIT too, which such a
    job also ignores: else every start would go through spawn's stub that restores both (an interpreter's start,
    12 ms of CPU, about 2,000 times a run), which the tests that ignore both themselves still exercise."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give an xdist_group to every test that shares a costly fixture with others; leave the rest ungrouped.

    Two tests share when they use the same fixture of SHARED_RUNS, or any module- or class-scoped fixture
    of the same module (made once per worker that runs a test of the module). Groups that meet in one
    test are merged. A test file added later needs nothing here: without such a fixture its tests are
    distributed one by one. Then the tests marked slow are moved first. Runs before xdist's own hook, which
    reads the groups (--dist loadgroup).
    """
    if not config.pluginmanager.hasplugin("xdist"):
        return
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keys_of = {}
    for item in items:
        keys = set()
        info = getattr(item, "_fixtureinfo", None)  # a test function's; other kinds of item use no fixtures
        for name, definitions in (info.name2fixturedefs if info else {}).items():
            if name in SHARED_RUNS:
                keys.add(name)
            elif definitions and definitions[-1].scope in ("module", "class"):
                keys.add(item.nodeid.split("::")[0])
        for key in keys:
            parent[root(key)] = root(min(keys))
        keys_of[item] = keys
    for item, keys in keys_of.items():
        if keys:
            item.add_marker(pytest.mark.xdist_group(root(min(keys))))
    # Start the tests marked slow first, longest first: xdist hands out the groups (most tests first), then single
    # tests in this order, and a two-minute test handed out last ends the run two minutes after the other workers.
    items.sort(key=lambda item: -seconds(item))


def seconds(item: pytest.Item) -> float:
    """About how long item takes on a loaded machine: its slow marker's seconds (60 when it names none), else 0."""
    mark = item.get_closest_marker("slow")
    return 0.0 if mark is None else float(mark.args[0] if mark.args else 60)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Name each grouped test "ID@GROUP" in an xdist worker, before the worker sends its ids to the scheduler.

    That is what pytest-xdist 3.8.0 does itself under --dist loadgroup, but it writes item._nodeid, which
    pytest 9.2 no longer reads (a node's id is item._id): without this every group would be scattered.
    Where xdist's own renaming works, the id already carries the "@" and is left alone.
    """
    if not session.config.getoption("loadgroup", False):  # set in xdist workers only
        return
    for item in session.items:
        groups = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group") if mark.args})
        if groups and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


@dataclass
class Tier:
    """One folder of tests/ as this run met it: the load when its first test started, its tests' span and sum."""

    load: tuple[float, float, float]
    tests: int = 0
    start: float = float("inf")
    stop: float = 0.0
    busy: float = 0.0  # the sum of its tests' own times (setup, call, teardown): what it cost the workers

    def line(self, name: str) -> str:
        load = " / ".join(f"{value:.2f}" for value in self.load)
        span = self.stop - self.start if self.tests else 0.0
        return f"{name:<6} {self.tests:4d} tests  span {span:5.0f} s  in tests {self.busy:6.0f} s  load at start {load}"


TIERS: dict[str, Tier] = {}


def tier_of(nodeid: str) -> str:
    """tests/TIER/... -> TIER; a test file directly under tests/ is its own "tests"."""
    parts = nodeid.split("::")[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "tests"


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """The load when a tier's first test starts (in xdist's controller too: the workers' starts are relayed)."""
    TIERS.setdefault(tier_of(nodeid), Tier(os.getloadavg()))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = TIERS.setdefault(tier_of(report.nodeid), Tier(os.getloadavg()))
    tier.start, tier.stop = min(tier.start, report.start), max(tier.stop, report.stop)
    tier.busy += report.duration
    tier.tests += report.when == "teardown"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Each tier's time and the load at its start, so that a slow or loaded run can be told from a regression
    (the tiers overlap under xdist: a span is wall time, the sum of its tests' times is what it cost)."""
    if TIERS and not hasattr(terminalreporter.config, "workerinput"):
        terminalreporter.section(f"tiers ({os.cpu_count()} cores; span: first test's start to last test's end)")
        for name in sorted(TIERS, key=lambda name: TIERS[name].start):
            terminalreporter.line(TIERS[name].line(name))


def probe_env(extra: dict | None = None) -> dict:
    """The environment the CLI runs in under test: an 80-column terminal, GitHub Actions only when extra says
    so (even when the tests themselves run there)."""
    base = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    return {**base, "COLUMNS": str(WIDTH), **(extra or {})}


@pytest.fixture(scope="session")
def pinned_run(tmp_path_factory) -> dict:
    """The one real default run of every case on the pinned SDK through the CLI, with every output option,
    under GitHub Actions: the evidence that the stock SDK reproduces each case, read by the tests of the
    CLI, its outputs, the proof and the client cases instead of each running the cases again.

    Returns the folder (results.json, junit.xml, summary.svg, expect.json, summary.md), the finished
    process, and the parsed results.
    """
    folder = tmp_path_factory.mktemp("pinned-run")
    outputs = ("--out", "results.json", "--junit", "junit.xml", "--svg", "summary.svg", "--write-expect", "expect.json")
    done = subprocess.run(
        [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), *outputs],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env=probe_env({"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}),
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((folder / "results.json").read_text())
    return {"folder": folder, "done": done, "results": results, "runs": {run["case"]: run for run in results["runs"]}}


@pytest.fixture
def runs(pinned_run) -> dict:
    """Each case's run in the session's full run of the pinned SDK (pinned_run), by case id."""
    return pinned_run["runs"]


@pytest.fixture(scope="session")
def run_cases():
    """Runs cases on one SDK in this process, nothing reported: (sdk, case ids, options) -> {case id: run}."""
    return lambda sdk, case_ids, options: {
        run["case"]: run for run in run_matrix([sdk], case_ids, options)
    }


@pytest.fixture(scope="session", autouse=True)
def index_as_stored():
    """Every release list the session reads, in this process and in the probes it starts, comes from the
    pages stored under tests/data/ (tests/stored_index.py), never from the live index."""
    with stored_index.served() as url, pytest.MonkeyPatch.context() as patch:
        patch.setattr(index, "INDEX_URL", url)
        patch.setenv("STDIO_PROBE_INDEX_URL", url)
        patch.setattr(index, "_cache", {})
        yield url


@pytest.fixture(scope="session")
def source_copy(tmp_path_factory) -> Path:
    """A copy of the checkout's sources, so that building or installing it leaves nothing in the checkout."""
    copy = tmp_path_factory.mktemp("source") / "stdio-probe"
    shutil.copytree(ROOT, copy, ignore=NOT_SOURCES)
    return copy


@pytest.fixture(scope="session")
def pinned():
    return pinned_sdk()


def _patched(pinned, tmp_path_factory, patches: dict, prefix: str):
    made = {}

    def make(name: str):
        if name not in made:
            made[name] = patched_sdk(tmp_path_factory.mktemp("sdk"), f"{prefix}{name}", patches[name], pinned)
        return made[name]

    return make


@pytest.fixture(scope="session")
def second_sdk():
    """mcp 2.3.0 from PyPI, in the default user cache: made on the first run, reused (and verified) after."""
    return resolve(Request("2.3.0", "pypi", "2.3.0"), envs.default_cache())


@pytest.fixture(scope="session")
def fixed(pinned, tmp_path_factory):
    """fixed(case_id) -> an Sdk copy of the pinned mcp with that one defect patched out; fixed("L7-at-caller")
    and the other OTHER_FIXES keys: the same defect fixed another way."""
    return _patched(pinned, tmp_path_factory, {**FIXES, **OTHER_FIXES}, "fix-")


@pytest.fixture(scope="session")
def broken(pinned, tmp_path_factory):
    """broken(name) -> an Sdk copy of the pinned mcp broken as BREAKS[name] says."""
    return _patched(pinned, tmp_path_factory, BREAKS, "")


@pytest.fixture(autouse=True)
def supervisor():
    """The test's own run (spawn.Supervisor), current in the test's thread (spawn.current()): what the test or
    its helpers start themselves (a server's session, a fixture) is its; ended after the test. A runner called
    by the test holds a supervisor of its own, nested in this one (it shares the process's children with it)."""
    with spawn.Supervisor() as supervisor, supervisor.arm_scope():
        yield supervisor


@pytest.fixture(autouse=True)
def no_leaked_processes(supervisor):
    """Fail any test that leaves a process carrying this run's marker alive (then reap it); before the test's
    supervisor ends, which would reap it unseen."""
    yield
    deadline = time.monotonic() + 3.0
    while spawn.run_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = spawn.run_processes()
    if left:
        supervisor.reap_all()
        pytest.fail(f"test left processes alive: {left}")

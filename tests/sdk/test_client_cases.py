"""L7, L8 and L10 on the pinned SDK (the raw facts their notes come from), and on SDK copies fixed each way."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stdio_probe.core.model import Options
from stdio_probe.core.spawn import FIXTURES
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.sdk.driver import checkpoint

CLIENT_CASES = ["L7", "L8", "L10"]
# each fix (tests/sdk_fixes.py: FIXES and OTHER_FIXES) and the case it fixes
FIXES = {
    "L7": "L7",
    "L7-at-caller": "L7",
    "L8": "L8",
    "L8-close-stdout": "L8",
    "L10": "L10",
    "L10-finish": "L10",
}
WINDOW = Options(method="window", window=5.0)  # the window method, with a shorter window than the default 10 s


@pytest.mark.parametrize("fix", list(FIXES))
def test_each_fix_is_seen_and_the_other_cases_still_reproduce(fix, fixed, run_cases):
    runs = run_cases(fixed(fix), CLIENT_CASES, Options())
    for case_id, run in runs.items():
        expected = "not_reproduced" if case_id == FIXES[fix] else "reproduced"
        assert run["verdict"] == expected, (case_id, run["reason"])
        assert run["mitigation"]["held"] is True, (case_id, run["mitigation"]["note"])


@pytest.mark.slow(30)
@pytest.mark.parametrize("fix", [fix for fix in FIXES if fix != FIXES[fix]])
def test_each_other_fix_is_seen_by_the_window_method(fix, fixed, run_cases):
    """The fixes named after their case are run with the window method by test_honesty.py."""
    case_id = FIXES[fix]
    run = run_cases(fixed(fix), [case_id], WINDOW)[case_id]
    assert run["verdict"] == "not_reproduced", run["reason"]


@pytest.mark.parametrize("case_id", CLIENT_CASES)
def test_pinned_reproduces_with_the_window_method(pinned, run_cases, case_id):
    """One test per case (each bug arm waits the window): the three go to free workers, not one after another."""
    run = run_cases(pinned, [case_id], WINDOW)[case_id]
    assert run["verdict"] == "reproduced", run["reason"]
    if case_id != "L7":  # L8 and L10 hang the host: the window, not a proof, decided that it is stuck
        assert run["arms"]["bug"]["stuck"]["decided_by"] == "window"


def _facts(runs: dict, case_id: str, arm: str, name: str) -> dict:
    return checkpoint(runs[case_id]["arms"][arm], name)["facts"]


def test_l7_the_session_dies_with_the_bad_call(runs):
    bug = _facts(runs, "L7", "bug", "calls")
    # the second call, started once the first is under way, is cancelled, or never runs (its task was cancelled
    # before its first step: the session was dead before it could be sent)
    assert bug["first"]["outcome"] == "cancelled" and bug["second"]["outcome"] in ("cancelled", "not sent")
    assert [leaf.split(":")[0] for leaf in bug["context_exit"]["leaves"]] == ["PydanticSerializationError"]
    control, mitigated = _facts(runs, "L7", "control", "calls"), _facts(runs, "L7", "mitigated", "calls")
    assert control["first"] == {**control["first"], "outcome": "result", "text": "a\ufffdb"}
    assert mitigated["first"]["text"] == "bad-\ufffd-name"
    for facts in (control, mitigated):
        assert facts["second"]["outcome"] == "result" and facts["context_exit"]["error"] is None


def test_l8_the_call_waits_on_the_pipe_holder(runs):
    """The bug's call is pending: the driver and the holder of the dead server's stdout blocked together, proven so
    where the proof landed first (how it was decided is information: on a loaded machine a window without progress
    may end the wait before the proof's attempt)."""
    bug, control = runs["L8"]["arms"]["bug"]["pending_call"], _facts(runs, "L8", "control", "call")
    assert bug["server"]["exit_code_logged"] == control["server"]["exit_code_logged"] == 3
    [holder] = bug["holders"]
    assert "signal.pause()" in holder["cmdline"] and bug["holders_alive_at_end"] == [holder["pid"]]
    assert bug["call"]["outcome"] == "pending"
    stuck = runs["L8"]["arms"]["bug"]["stuck"]
    assert stuck["decided_by"] in ("proof", "window"), stuck
    if stuck["decided_by"] == "proof":
        together = {int(pid) for pid in stuck["proof"]["threads"]}
        assert together == {runs["L8"]["arms"]["bug"]["pid"], holder["pid"]}
    reaped = runs["L8"]["arms"]["bug"]["reaped_after_arm"]
    assert [p["pid"] for p in reaped] == [holder["pid"]], "the probe reaps the holder the SDK left behind"
    assert control["holders"] == [] and control["call"]["error"] == "MCPError: Connection closed"
    assert _facts(runs, "L8", "mitigated", "call")["call"]["error"].startswith("ServerExited")


def test_l10_the_host_is_stuck_and_its_server_orphaned(runs):
    """Stuck, proven so where the proof landed before a window without progress (information: load decides which)."""
    bug = runs["L10"]["arms"]["bug"]
    assert bug["stuck"]["decided_by"] in ("proof", "window") and bug["stuck"]["after_checkpoint"] == "started"
    if bug["stuck"]["decided_by"] == "proof":
        assert {t["syscall"].get("name") for t in bug["stuck"]["proof"]["threads"]} <= {"epoll_wait", "wait4"}
    server = bug["server"]
    assert server["signals"] == [] and server["stdin_eof_t"] is not None and server["alive_after_host"]
    assert server["ppid_after_host"] != server["ppid_at_start"], "the server outlived its host"
    assert [p["pid"] for p in bug["reaped_after_arm"]] == [server["pid"]]
    for arm in ("control", "mitigated"):
        record = runs["L10"]["arms"][arm]
        assert checkpoint(record, "returned")["facts"]["raised"] == "TimeoutError"
        assert record["server"]["signals"] == ["SIGTERM"] and not record["server"]["alive_after_host"]
        assert record["reaped_after_arm"] == []


def test_sdk_without_call_tool_is_not_applicable_for_l7_and_l8(broken, run_cases):
    for case_id, run in run_cases(broken("without-call-tool"), ["L7", "L8"], Options()).items():
        assert run["verdict"] == "not_applicable", (case_id, run["reason"])
        assert "no call_tool" in run["reason"]


def test_the_client_cases_server_logs_a_line_that_is_not_a_json_object_and_answers_the_next(tmp_path):
    """A fixed client's bad line (not JSON, not UTF-8, not an object) must not crash the server its case reads."""
    events = tmp_path / "server.events"
    done = subprocess.run(
        [sys.executable, str(FIXTURES / "fixture_server.py"), "--events", str(events), "--tool-lists", "a"],
        input=b'not json\n\xff\n[1]\n{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n',
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["result"]["tools"][0]["name"] == "a", done.stderr
    bad = [event["raw"] for event in read_events(str(events)) if event["event"] == "bad_line"]
    assert bad == ["not json", "\ufffd", "[1]"]

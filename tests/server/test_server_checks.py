"""The server checks (S1-S14) on real processes: a stdlib server (fixtures/fixture_check_server.py),
well behaved by default and given each defect shape by a flag; a hostile one that must not hang
the probe; the hang proof's foreign mode; and --server through the CLI.

Every test also passes conftest's guard: no process of the run is left alive.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import shutil
import socket
import sys
import threading
import time
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import jsonschema
import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import eras, hang, progress, runner, sample, spawn, wire
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.report import record, report
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.server import session
from stdio_probe.server.args import ServerArgsError, tool_call
from stdio_probe.server.checks import CHECKS, s12_invalid_requests
from tests.cli_run import assert_fits, probe
from tests.fixture_commands import BUG, BUSY_WINDOW, FIXTURE, OK, SHAPES, SLOW, WINDOW, command, shape_windows
from tests.paths import TESTS
from tests.proof_readings import differing

PIDFD_GETFD = {"x86_64": 438, "aarch64": 438}[sample.ARCH]


def run_checks(
    flags: tuple[str, ...],
    method: str = "fast",
    checks: list[str] | None = None,
    window: float = WINDOW,
    sequential_arms: bool = False,
) -> dict[str, dict]:
    server = Server("fixture", command(*flags), ("large", {}), slow_call=SLOW, sequential_arms=sequential_arms)
    runs = runner.run_servers([server], checks or list(CHECKS), Options(window, method))
    return {run["case"]: run for run in runs}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_defect_shape_shows_in_its_check_alone(shape):
    flags, expected = SHAPES[shape]
    runs = {}
    for checks, window in shape_windows(shape):
        runs |= run_checks(flags, checks=checks, window=window)
    verdicts = {case: run["verdict"] for case, run in runs.items() if expected[case] is not None}
    wanted = {c: v for c, v in expected.items() if v is not None}
    assert verdicts == wanted, differing(runs, wanted)


RACE_RUNS = 5  # full runs of S7 on the fixture that drops answers at EOF in one run of three


@pytest.mark.parametrize("method", ["fast", "window"])
def test_a_drop_at_eof_in_one_run_of_three_is_reproduced_in_every_run_with_its_rate(method):
    """The fixture decides at random, at its start, whether it drops its queued answers at EOF: S7 tries a fresh
    server until one does, so every run reads reproduced, and says after how many trials ("1 of N")."""
    for _ in range(RACE_RUNS):
        run = run_checks(("--drop-at-eof-sometimes",), method, ["S7"])["S7"]
        trials = run["arms"]["bug"]["trials"]
        assert run["verdict"] == BUG, run["reason"]
        assert trials["shown"] == 1 and 1 <= trials["run"] <= session.RATE_TRIALS, trials
        assert run["headline"].startswith(f"1 of {trials['run']} trials: ") and run["arms"]["bug"]["answered"] < 21
        assert f"shown in 1 of {trials['run']} trials; that trial: " in run["reason"]


def test_a_race_not_shown_is_tried_every_time_the_rate_asks():
    """A server that answers every request before its stdout ends: S7 tries all RATE_TRIALS, the rate says 0 of them."""
    run = run_checks((), checks=["S7"])["S7"]
    assert run["verdict"] == OK and run["arms"]["bug"]["trials"] == {"run": session.RATE_TRIALS, "shown": 0}
    assert run["headline"] == f"0 of {session.RATE_TRIALS} trials: all 21 answered"


def test_s8_needs_one_trial_unless_sigpipe_killed_the_server():
    """The fixture ignores SIGPIPE, as Node and Python do: its write fails with EPIPE and it exits at EOF, an outcome
    the race cannot have hidden a stay behind, so the first trial settles S8. Restoring SIGPIPE's default (a Go
    server's stdout), it is killed writing the answer: that hides whether it would stay, and every trial is run."""
    settled = run_checks((), checks=["S8"])["S8"]
    assert settled["verdict"] == OK and settled["arms"]["bug"]["trials"] == {
        "run": 1,
        "shown": 0,
        "settled": "it ended (exit 0), not killed by SIGPIPE",
    }, settled["reason"]
    assert settled["reason"].startswith("shown in 0 of 1 trials (no more: it ended (exit 0), not killed by SIGPIPE)")
    killed = run_checks(("--die-on-epipe",), checks=["S8"])["S8"]
    assert killed["verdict"] == OK and killed["arms"]["bug"]["signal"] == "SIGPIPE", killed["reason"]
    assert killed["arms"]["bug"]["trials"] == {"run": session.RATE_TRIALS, "shown": 0}


def test_s9_needs_one_trial_where_sigint_has_its_default_action():
    """The fixture leaves SIGINT's default action: the kernel ends it, no handler runs, and the first trial settles
    S9. With a handler of its own (it aborts), SIGINT runs its code, the race S9 looks for, and every trial is run."""
    settled = run_checks((), checks=["S9"])["S9"]
    bug = settled["arms"]["bug"]
    assert settled["verdict"] == OK and bug["sigint"] == "default" and bug["signal"] == "SIGINT", settled["reason"]
    assert bug["trials"] == {"run": 1, "shown": 0, "settled": SIGINT_SETTLED}

    handled = run_checks(("--abort-on-signal",), checks=["S9"])["S9"]
    bug = handled["arms"]["bug"]
    assert handled["verdict"] == OK and bug["sigint"] == "caught" and bug["signal"] == "SIGABRT", handled["reason"]
    assert bug["trials"] == {"run": session.RATE_TRIALS, "shown": 0}


SIGINT_SETTLED = "SIGINT had its default action: the kernel ended it, no handler ran"


def test_a_signal_at_its_default_action_settles_the_crash_checks_at_the_first_trial():
    """S11 and S14 look for a crash on the way out, a race of the server's shutdown paths; the fixture leaves SIGTERM
    and SIGINT their default actions, so the kernel ends it and none of its code runs: one trial decides each arm,
    S14's read from S3's and S9's runs of the server (one start each for both checks)."""
    runs = run_checks((), checks=["S3", "S9", "S11", "S14"])
    for case, arm, name in (("S11", "bug", "SIGTERM"), ("S14", "sigterm", "SIGTERM"), ("S14", "sigint", "SIGINT")):
        record = runs[case]["arms"][arm]
        assert runs[case]["verdict"] == OK and record[name.lower()] == "default", runs[case]["reason"]
        assert record["trials"] == {"run": 1, "shown": 0, "settled": SIGINT_SETTLED.replace("SIGINT", name)}
    assert "trials" not in runs["S3"]["arms"]["bug"] and runs["S14"]["shared_arms"] == {
        "sigterm": "S3 bug",
        "sigint": "S9 bug",
    }


@pytest.mark.parametrize("method", ["fast", "window"])
def test_a_crash_at_a_signal_in_one_run_of_two_is_reproduced_in_every_run_with_its_rate(method):
    """The fixture decides at random, at its start, whether a signal aborts it (a crash trace, SIGABRT) or its own
    handler exits 0: S11 and each arm of S14 (read from S3's and S9's runs of the server) try a fresh server until
    one crashes, so every run reads reproduced, each arm saying after how many trials; S3, whose defect cannot
    hide so, reads the first of its runs, and exits within the bound in every one."""
    for _ in range(CRASH_RACE_RUNS):
        runs = run_checks(("--abort-on-signal-sometimes",), method, ["S3", "S9", "S11", "S14"])
        assert runs["S11"]["verdict"] == runs["S14"]["verdict"] == BUG, (runs["S11"]["reason"], runs["S14"]["reason"])
        for case, arm in (("S11", "bug"), ("S14", "sigterm"), ("S14", "sigint")):
            trials = runs[case]["arms"][arm]["trials"]
            assert trials["shown"] == 1 and 1 <= trials["run"] <= session.RATE_TRIALS, (case, arm, trials)
        assert runs["S11"]["reason"].startswith("shown in 1 of "), runs["S11"]["reason"]
        assert runs["S3"]["verdict"] == OK and "trials" not in runs["S3"]["arms"]["bug"]


# full runs of the crash checks on the fixture that a signal aborts in one run of two (each arm misses it in all 21
# trials with odds 0.5 ** 21: the test's 18 arms, 1 in 100,000)
CRASH_RACE_RUNS = 3


@pytest.mark.parametrize("checks", [["S5"], ["S1", "S3", "S5", "S10", "S14"]])
def test_a_descendant_that_outlives_the_server_is_listed_and_reaped(checks):
    """S5 alone runs its arms itself; with S1 and S3 it reads theirs (shared_arms), one start for both, and its
    verdict is the same."""
    runs = run_checks(("--leave-child", "--child-new-session"), checks=checks)
    for arm in runs["S5"]["arms"].values():
        (survivor,) = arm["survivors"]
        assert "sleep 60" in survivor["cmdline"] and survivor in arm["reaped"] and arm["alive_after_reap"] == []
    assert "reaped by the probe, 0 alive after" in runs["S5"]["reason"]
    shared = {"S5": {"eof": "S1 bug", "sigterm": "S3 bug"}, "S10": {"bug": "S1 bug"}, "S14": {"sigterm": "S3 bug"}}
    assert {case: run["shared_arms"] for case, run in runs.items() if "shared_arms" in run} == (
        shared if "S1" in runs else {}
    )
    if "S1" in runs:
        assert ("shared", "eof is S1 bug's arm, one start of the server for both") in report.arm_lines(runs["S5"])
        assert runs["S5"]["arms"]["eof"] == runs["S1"]["arms"]["bug"] == runs["S10"]["arms"]["bug"]
        assert runs["S1"]["verdict"] == runs["S3"]["verdict"] == runs["S10"]["verdict"] == OK


def test_a_shared_arm_whose_owner_is_rerun_alone_reads_the_owners_rerun():
    """A server that stays after EOF: S1 reproduced, S10 inconclusive on the same arm, both rerun one at a time.
    S1's rerun is one run alone of S10's trigger, so S10 starts no server of its own for it, and is judged on it."""
    reruns = []

    def on_arm(label: str, probe_id: str, arm: str, state: str, note: str) -> None:
        if state == "done" and arm.endswith(runner.RERUN):
            reruns.append((probe_id, arm))

    server = Server("stays", command("--no-exit-on-eof"))
    runs = {run["case"]: run for run in runner.run_servers([server], ["S1", "S10"], Options(WINDOW), on_arm)}
    assert reruns == [("S1", f"bug, {runner.RERUN}")]
    assert runs["S1"]["verdict"] == BUG and runs["S10"]["verdict"] == "inconclusive", runs["S10"]["reason"]
    assert runs["S10"]["side_by_side"] == {"verdict": "inconclusive", "rerun_alone": "inconclusive", "interfere": False}
    assert runs["S10"]["shared_arms"] == {"bug": "S1 bug"}


def test_large_answer_hang_is_proven_without_waiting_the_window():
    runs = run_checks(("--blocking-writes",), checks=["S2"])
    bug = runs["S2"]["arms"]["bug"]
    assert bug["decided_by"] == "proof", bug.get("proof_attempts")  # before a window without progress: not waited
    assert bug["proof"]["timer_answer"] == {"tid": None, "fd": None, "itimers": {}}


def test_an_event_loop_waiting_on_its_own_eventfd_and_a_disarmed_timerfd_is_proven_blocked():
    runs = run_checks(("--blocking-writes", "--eventfd-loop"), checks=["S2"])
    bug = runs["S2"]["arms"]["bug"]
    assert runs["S2"]["verdict"] == BUG and bug["decided_by"] == "proof", bug.get("proof_attempts")
    assert not any("no longer at fd" in (a["why_not"] or "") for a in bug["proof_attempts"])
    # the proven arm's record says what each thread waited on and which row of the table ruled out each fd
    readings = bug["proof"]["readings"]
    rows = {row for thread in readings["threads"] for row in thread["ruled_out"]}
    assert "not ruled out" not in rows and all(thread["waits_in"] for thread in readings["threads"]), readings
    assert {"eventfd at count 0, held by no other process", "pipe: other end held only by the probe"} <= rows, rows
    assert any(row.startswith("timerfd disarmed") for row in rows), rows
    process_rows = {"signals", "posix_timers", "children", "marked", "adopted", "interval_timers"}
    assert set(readings["process"]) == process_rows, readings


def test_sigterm_waiting_for_the_unread_answer_is_proven_and_ends_once_drained():
    runs = run_checks(("--drain-on-sigterm",), checks=["S11"])
    bug = runs["S11"]["arms"]["bug"]
    assert bug["decided_by"] == "proof", bug.get("proof_attempts")  # before a window without progress: not waited
    assert bug["exited_after_drain"] and bug["exit_code"] == 0


def test_s13_records_the_servers_error_at_eof_beside_the_tools_result():
    run = run_checks(("--cancel-at-eof",), checks=["S13"])["S13"]
    bug, control = run["arms"]["bug"], run["arms"]["control"]
    assert bug["answer"] == {"kind": "error", "text": "error -32000 Connection closed"}, run["reason"]
    assert control["answer"] == {"kind": "result", "text": "result 'slept 0.5 s'"}
    assert not bug["answered_before_eof"] and bug["eof_after_call_s"] < control["answer_after_call_s"]
    assert "bug: stdin closed" in run["reason"] and "control: stdin closed" in run["reason"]


def test_s13_a_call_that_keeps_the_server_alive_after_eof_is_decided_at_the_window():
    run = run_checks(("--stuck-at-eof",), checks=["S13"])["S13"]
    bug, control = run["arms"]["bug"], run["arms"]["control"]
    assert bug["alive_at_decision"] and bug["decided_by"] == "window" and bug["decided_after_eof_s"] >= WINDOW
    assert bug["answer"]["kind"] == "none" and not control["alive_at_decision"]


def test_s13_without_a_slow_call_is_not_applicable_and_starts_nothing():
    arm = CHECKS["S13"].run("bug", Server("fixture", command()), Options(WINDOW))
    assert arm == {"not_applicable": "needs --slow-call 'TOOL {json arguments}' (a call that takes 0.5 s or more)"}


def test_s12_lists_each_frame_and_what_came_back_once_the_server_is_proven_idle():
    """An arm with a frame unanswered once the marker is waits for the proof that the server is idle; an arm whose
    every frame was answered by then waits for nothing (all_answered)."""
    well, dropping = run_checks((), checks=["S12"])["S12"], run_checks(("--drop-invalid",), checks=["S12"])["S12"]
    for run in (well, dropping):
        for name, arm in run["arms"].items():
            if run is dropping and name == "bug":
                assert arm["marker_answered"] and arm["decided_by"] == "proof" and arm["settled_by"] == "proof"
            else:
                assert arm["marker_answered"] and arm["settled_by"] == "all_answered" and "decided_by" not in arm
            assert all(len(frame["sent"]) < 150 for frame in arm["frames"])
        assert {frame["answer"] for frame in run["arms"]["control"]["frames"]} == {"result"}
    assert well["reason"].startswith("bug: every frame answered: deep: result;"), well["reason"]
    bug = well["arms"]["bug"]
    answered = dict(zip([frame["name"] for frame in bug["frames"]], s12_invalid_requests.came_back(bug), strict=True))
    assert answered == {
        "deep": "result",  # valid JSON-RPC: the stdlib's parser takes 300 levels
        "no jsonrpc": "error -32600 Invalid request",
        'jsonrpc "1.0"': "error -32600 Invalid request",
        "method_": "error -32600 Invalid request",
        "id only": "error -32600 Invalid request",
        "batch": "error -32600 Invalid request: batches are not supported (id null)",
        "not JSON": "error -32700 Parse error (id null)",
    }
    bug = dropping["arms"]["bug"]
    assert [frame["name"] for frame in bug["frames"] if frame["answer"] == "no answer"] == list(answered)[1:]
    assert bug["frames"][0]["sent"].endswith("characters)") and bug["frames"][-1]["sent"] == "{not json"
    assert "dropped: Parse error" in bug["stderr"]


def test_s12_without_a_proof_waits_for_stdout_to_end_after_eof():
    """The window method never proves: what came back is final once stdout ends after stdin EOF; the control,
    every twin answered by the marker's answer, waits for nothing (all_answered), as in the fast method."""
    runs = run_checks(("--drop-invalid",), "window", ["S12"])
    assert runs["S12"]["verdict"] == BUG, runs["S12"]["reason"]
    bug, control = runs["S12"]["arms"]["bug"], runs["S12"]["arms"]["control"]
    assert bug["decided_by"] == "window" and bug["settled_by"] == "stdout_end" and bug["exit_code"] == 0, bug
    assert control["settled_by"] == "all_answered" and "decided_by" not in control, control
    assert "stdout ended after stdin EOF" in runs["S12"]["reason"]


def test_s12_the_sdks_mcpserver_answers_no_invalid_request():
    """python-sdk #2751 on the pinned SDK's MCPServer (tests/servers/py_mcpserver.py): each frame handed to the
    session as an exception, none answered, the deep one included (pydantic's parser stops at 255 levels)."""
    server = Server("mcpserver", f"{sys.executable} {TESTS / 'servers' / 'py_mcpserver.py'}")
    run = runner.run_servers([server], ["S12"], Options(WINDOW))[0]
    assert run["verdict"] == BUG, run["reason"]
    assert {frame["answer"] for frame in run["arms"]["bug"]["frames"]} == {"no answer"}
    assert run["arms"]["bug"]["decided_by"] == "proof" and run["arms"]["bug"]["id_null"] == []
    assert {frame["answer"] for frame in run["arms"]["control"]["frames"]} == {"result"}


@pytest.mark.parametrize(
    ("exit_after_s", "cpu_s", "shown"),
    [
        (0.05, 0.0, False),
        (2.0, 1.2, True),
        (None, 0.0, True),
        (None, 9.0, True),
        (2.0, 0.5, False),
        (0.3, 0.25, False),  # an interpreter's teardown: most of a short observation, no spin
    ],
)
def test_s8_calls_more_than_half_a_core_a_spin_even_when_the_server_exits(exit_after_s, cpu_s, shown):
    observed = exit_after_s or WINDOW
    record = {"initialized": True, "bound_s": WINDOW, "exit_after_s": exit_after_s, "cpu_s": cpu_s}
    finding = CHECKS["S8"].assess(record | {"observed_s": observed, "exit_code": 0, "signal": None})
    assert finding.shown is shown and ("spin" in finding.note) == (cpu_s / observed > 0.5 and cpu_s >= 1.0)


@pytest.mark.parametrize("busy", [True, False], ids=["busy", "idle"])
def test_a_server_busy_past_the_window_after_eof_is_not_alive_after_it_an_idle_one_is(busy):
    """The window rule (method.md): a server that spends two windows on a core after EOF before it exits (a
    teardown a loaded machine makes long) makes progress all the while and exits within S1's window; one asleep as
    long is alive after it (the window, counted while it is idle)."""
    flags = ("--exit-after", str(2 * WINDOW), *(("--busy-exit",) if busy else ()))
    run = run_checks(flags, checks=["S1"])["S1"]
    arm = run["arms"]["bug"]
    if busy:
        assert run["verdict"] == OK and arm["exit_after_s"] >= 2 * WINDOW, arm
    else:
        assert run["verdict"] == BUG and arm["exit_after_s"] is None and "busy_after_s" not in arm, arm


def test_a_server_busy_without_end_is_shown_at_the_outer_bound_as_busy_never_as_a_hang():
    """A server that spins after EOF and never exits makes progress past every window: its watch ends at the
    outer bound (OUTER_WINDOWS windows), where S1 shows it "still busy", not "alive" after a window. A spin burns a
    core to that bound whatever the window: BUSY_WINDOW, and its one arm alone (no rerun of it spinning again)."""
    spinning = ("--exit-after", "3600", "--busy-exit")
    run = run_checks(spinning, checks=["S1"], window=BUSY_WINDOW, sequential_arms=True)["S1"]
    arm = run["arms"]["bug"]
    assert run["verdict"] == BUG and arm["busy_after_s"] >= progress.OUTER_WINDOWS * BUSY_WINDOW, arm
    assert "still busy" in run["reason"], run["reason"]


def test_s8_gives_no_verdict_when_the_probes_reader_did_not_stop():
    assert CHECKS["S8"].assess({"initialized": True, "reader_stopped": False}).shown is None


def test_s4_names_the_schemas_objection_to_a_response_without_an_id():
    run = run_checks(("--answer-notifications",), checks=["S4"])["S4"]
    offending = run["arms"]["bug"]["stdout"]["offending"]
    assert offending["text"] == '{"jsonrpc": "2.0", "result": null}' and offending["line"] == 2
    assert "not a JSON-RPC message of MCP 2025-11-25" in offending["why"]


def test_s4_opens_the_connection_once():
    """S4 opens the connection itself (session.run(opening=False)): one answer line per request, no second
    initialize (its duplicate id 0 answered twice on stdout)."""
    arm = run_checks((), checks=["S4"])["S4"]["arms"]["bug"]
    assert arm["initialized"] and arm["stdout"]["lines"] == len(arm["answered"])


def test_no_proof_for_a_server_with_a_sigalrm_handler_the_window_decides():
    runs = run_checks(("--blocking-writes", "--sigalrm-handler"), checks=["S2"])
    bug = runs["S2"]["arms"]["bug"]
    assert runs["S2"]["verdict"] == BUG and bug["decided_by"] == "window"
    assert bug["decided_after_eof_s"] >= WINDOW
    assert [a["why_not"] for a in bug["proof_attempts"]] == [
        "SIGALRM has a handler (an interval timer could wake the process)"
    ]


@pytest.mark.parametrize("flags", [(), ("--blocking-writes",)], ids=["well-behaved", "blocking"])
def test_fast_method_agrees_with_the_window_method(flags):
    fast, window = run_checks(flags, "fast", ["S2"]), run_checks(flags, "window", ["S2"])
    assert fast["S2"]["verdict"] == window["S2"]["verdict"] == (BUG if flags else OK)
    assert window["S2"]["arms"]["bug"]["decided_by"] in ("window", "exit")


@pytest.mark.slow(150)
def test_a_hostile_server_does_not_hang_the_probe_or_grow_its_memory(monkeypatch):
    """Floods stdout and stderr, ignores SIGTERM, never exits on EOF, forks a child into a new session. Never idle,
    it is watched to the outer bound in every wait, whatever the window: BUSY_WINDOW. Its arms take turns: side by side,
    every check it fails would be rerun alone (runner.Servers.reruns), each wait to the outer bound twice, for nothing
    this test reads (the sandboxes have tests of their own). S7 takes two trials, not the rate's 21: each waits to
    the outer bound, and the rate is another test's (test_a_race_not_shown_is_tried_every_time_the_rate_asks)."""
    monkeypatch.setitem(CHECKS, "S7", dataclasses.replace(CHECKS["S7"], trials=2))
    flags = (
        "--flood-stdout",
        "--flood-stderr",
        "--ignore-sigterm",
        "--no-exit-on-eof",
        "--leave-child",
        "--child-new-session",
    )
    started = time.monotonic()
    runs = run_checks(flags, window=BUSY_WINDOW, sequential_arms=True)
    # bounded by the rules, whatever the load: a server that floods is never idle, so each wait of each trial of
    # each arm may run to the outer bound (progress.OUTER_WINDOWS windows), then TERM_GRACE before its SIGKILL
    trials = sum(arm.get("trials", {}).get("run", 1) for run in runs.values() for arm in run["arms"].values())
    assert time.monotonic() - started < trials * (progress.OUTER_WINDOWS * BUSY_WINDOW + 2 * spawn.TERM_GRACE)
    assert runs["S4"]["verdict"] == BUG and runs["S5"]["verdict"] == BUG and runs["S3"]["verdict"] == BUG
    for run in runs.values():
        for arm in run["arms"].values():
            assert len(arm.get("stderr", "")) <= spawn.STDERR_LIMIT + 1
            assert len(json.dumps(arm)) < 2 * wire.KEPT_CAP


def test_reader_keeps_within_bounds_whatever_the_server_writes():
    flood = spawn.current().spawn_command(command("--flood-stdout"))[0]
    try:
        reader = wire.StdoutReader(flood)
        assert reader.wait_for(lambda r: r.bytes > 3 * wire.KEPT_CAP, 20.0)
        assert reader.offending["line"] == 1 and reader.offending["text"].startswith("flood")
        assert sum(len(json.dumps(m)) for m in reader.messages) <= 2 * wire.KEPT_CAP
    finally:
        flood.stop()


def test_a_reader_that_parses_long_lines_keeps_within_the_same_bounds(tmp_path):
    """S4's reader parses lines up to 8 MiB whole: a kept line costs what it holds, not the default cap's worth."""
    writer = tmp_path / "long_lines.py"
    writer.write_text(
        "import sys, time\n"
        "line = '{\"jsonrpc\": \"2.0\", \"method\": \"n\", \"params\": {\"x\": \"' + 'y' * 700_000 + '\"}}\\n'\n"
        "sys.stdout.write(line * 20)\nsys.stdout.flush()\ntime.sleep(60)\n"
    )
    child = spawn.current().spawn_command(f"{sys.executable} {writer}")[0]
    try:
        reader = wire.StdoutReader(child, line_cap=8 * 1024 * 1024)
        assert reader.wait_for(lambda r: r.lines >= 20, 20.0)
        assert reader.offending is None, "every line is JSON-RPC, parsed whole"
        assert sum(len(json.dumps(m)) for m in reader.messages) <= 2 * wire.KEPT_CAP
    finally:
        child.stop()


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("large", ("large", {})), ('git_log {"max_count": 1500}', ("git_log", {"max_count": 1500}))],
)
def test_a_large_or_slow_call_is_a_tool_and_json_arguments(text, parsed):
    assert tool_call(text) == tool_call(text, "--slow-call") == parsed


@pytest.mark.parametrize("text", ["x {bad", "x [1]", ""])
def test_a_call_that_is_not_a_tool_and_a_json_object_is_refused(text):
    with pytest.raises(ServerArgsError, match="--slow-call"):
        tool_call(text, "--slow-call")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--server", "no-such-server-xyz"], "no-such-server-xyz not found"),
        (["--server", "python3 'unclosed"], "No closing quotation"),
        (["--large-call", "large", "--server", "python3"], "applies to the --server before it"),
        (["--server", "python3", "--large-call", "large {bad json"], "arguments are not JSON"),
        (["--server", "python3", "--large-call", "a", "--large-call", "b"], "given twice"),
        (["--slow-call", "slow", "--server", "python3"], "applies to the --server before it"),
        (["--server", "python3", "--slow-call", "slow [1]"], "--slow-call 'slow [1]': arguments must be a JSON object"),
        (["--server", "python3", "--only", "L1"], "unknown check (with --server) L1"),
        (["--server", "python3", "--sdk", "2.2.0"], "--sdk does not go with --server"),
        (["--server", "python3", "--name", "x", "--server", "python3", "--name", "x"], "names two servers"),
    ],
)
def test_bad_server_input_is_one_line_exit_2_and_no_results(args, message, tmp_path):
    out = tmp_path / "results.json"
    done = probe(*args, "--out", str(out), cwd=tmp_path)
    assert done.returncode == cli.EXIT_USAGE, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One CLI run of two fixture servers: a well-behaved one and one with a banner that blocks on large answers."""
    folder = tmp_path_factory.mktemp("servers")
    args = [
        "--server",
        command(),
        "--large-call",
        "large {}",
        "--slow-call",
        'slow {"seconds": 0.5}',
        "--name",
        "good",
        "--server",
        command("--banner", "--blocking-writes"),
        "--large-call",
        "large",
        "--name",
        "bad",
        "--window",
        str(WINDOW),
        "--junit",
        "junit.xml",
        "--write-expect",
        "expected.json",
    ]
    done = probe(*args, cwd=folder)
    return {"done": done, "folder": folder, "args": args, "results": json.loads((folder / "results.json").read_text())}


def test_cli_runs_every_check_on_every_server_and_records_its_identity(cli_run):
    assert cli_run["done"].returncode == cli.EXIT_OK, cli_run["done"].stderr
    runs = cli_run["results"]["runs"]
    jsonschema.validate(cli_run["results"], json.loads(SCHEMA_PATH.read_text()))
    verdicts = {(run["server"]["label"], run["case"]): run["verdict"] for run in runs}
    assert verdicts == {("good", c): OK for c in CHECKS} | {("bad", c): OK for c in CHECKS} | {
        ("bad", "S2"): BUG,
        ("bad", "S4"): BUG,
        ("bad", "S13"): "not_applicable",  # no --slow-call
    }
    assert runs[0]["server"] == {
        "label": "good",
        "command": record.portable({"command": command()})["command"],  # as a results file writes it
        "large_call": {"tool": "large", "arguments": {}},
        "slow_call": {"tool": "slow", "arguments": {"seconds": 0.5}},
        "era": runs[0]["server"]["era"],
        "env": {"names": [], "inherit": False},
    }
    assert runs[0]["server"]["era"]["protocol"] == "legacy"  # the fixture's default (test_eras: both eras)
    assert_fits(cli_run["done"].stdout)
    assert "bad" in cli_run["done"].stdout and "S11" in cli_run["done"].stdout


def test_cli_junit_has_a_testcase_per_server_and_check(cli_run):
    root = ET.parse(cli_run["folder"] / "junit.xml").getroot()
    assert root.get("tests") == str(2 * len(CHECKS)) and root.get("failures") == "2"
    names = {(case.get("classname"), case.get("name").split()[0]) for case in root.iter("testcase")}
    assert names == {(label, c) for label in ("good", "bad") for c in CHECKS}


def test_cli_expect_is_keyed_by_server(cli_run):
    folder = cli_run["folder"]
    written = json.loads((folder / "expected.json").read_text())
    assert written["S2"] == {"good": OK, "bad": BUG}
    args = [a for a in cli_run["args"] if a not in ("junit.xml", "expected.json", "--junit", "--write-expect")]
    (folder / "wrong.json").write_text(json.dumps({"S4": {"good": BUG}, "S1": {"absent": OK}}))
    done = probe(*args, "--only", "S1,S4", "--expect", "wrong.json", "--out", "again.json", cwd=folder)
    assert done.returncode == cli.EXIT_MISMATCH
    assert "S4 on good: expected reproduced, got not_reproduced" in done.stderr
    assert "S1 on absent: expected not_reproduced, but nothing in this run checked it" in done.stderr
    met = probe(*args, "--only", "S1,S4", "--expect", "expected.json", "--out", "again.json", cwd=folder)
    assert met.returncode == cli.EXIT_OK, met.stderr


def test_a_single_server_summary_is_a_line_per_check_without_a_host_contract_column(cli_run, tmp_path):
    done = probe("--server", command("--banner"), "--only", "S4", "--window", str(WINDOW), cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith(" S4")]
    assert "reproduced" in line and "line 1" in line and "host contract" not in done.stdout
    assert_fits(done.stdout)
    assert os.path.exists(tmp_path / "results.json")


def test_a_server_that_never_answers_is_inconclusive_not_a_finding(tmp_path):
    runs = runner.run_servers([Server("sleep", "sleep 30")], ["S1", "S6a"], Options(1.0))
    assert [run["verdict"] for run in runs] == ["inconclusive", "inconclusive"]
    assert all("no answer to initialize" in run["reason"] for run in runs)


def test_an_in_process_run_starts_again_after_a_run_was_stopped():
    """A run stopped mid-arm (its supervisor's stop, what Ctrl-C calls) ends and leaves nothing alive; the next
    run in the same process spawns and decides: nothing of the stopped run's outlives it (its stopping flag
    once refused every later spawn of the process)."""
    stubborn = Server("stubborn", command("--no-exit-on-eof"), protocol=eras.LEGACY)  # S1 waits its window
    first: list[list[dict]] = []
    with spawn.Supervisor() as supervisor:
        checks = lambda: runner.run_servers([stubborn], ["S1"], Options(30.0), supervisor=supervisor)  # noqa: E731
        run = threading.Thread(target=lambda: first.append(checks()))
        run.start()
        deadline = time.monotonic() + 300  # a safety net: the run's end ends the wait, not a clock (a loaded machine)
        while not spawn.run_processes() and run.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert spawn.run_processes(), "the first run spawned nothing"
        stopped = time.monotonic()
        supervisor.stop()
        run.join(30)
        assert not run.is_alive() and time.monotonic() - stopped < 10, "the stopped run did not end"
    assert [found["case"] for found in first[0]] == ["S1"] and spawn.run_processes() == []
    runs = runner.run_servers([Server("fixture", command())], ["S1"], Options(WINDOW))
    assert [found["verdict"] for found in runs] == [OK], [found["reason"] for found in runs]


def test_one_servers_arms_run_side_by_side_unless_declared_sequential(monkeypatch):
    """Each start of a server has a sandbox of its own: its arms run side by side, as different servers' do; one
    declared --sequential-arms (copies sharing a port or a path on its command line) takes turns."""
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()
    together = threading.Barrier(6, timeout=30)  # the two side by side servers' three arms each, all at once

    def run_arm(arm: str, server: Server, options: Options) -> dict:
        with lock:
            running[server.label] = running.get(server.label, 0) + 1
            most[server.label] = max(most.get(server.label, 0), running[server.label])
        if not server.sequential_arms:
            together.wait()
        else:
            threading.Event().wait(0.05)  # long enough for a second arm of the same server to start, if it could
        with lock:
            running[server.label] -= 1
        return {}

    turns = Probe("SX", "arms that count each other", ("a", "b", "c"), run_arm, lambda record: Finding(False, "ran"))
    monkeypatch.setitem(runner.CHECKS, "SX", turns)
    monkeypatch.setattr(runner, "decide_check", lambda check, arms: {"verdict": OK, "reason": ""})
    servers = [Server("one", "x"), Server("two", "x"), Server("alone", "x", sequential_arms=True)]
    runs = runner.run_servers(servers, ["SX"], Options())
    assert [run["verdict"] for run in runs] == [OK] * 3
    assert most == {"one": 3, "two": 3, "alone": 1}


def test_sequential_arms_applies_to_the_server_before_it():
    args = cli.parse_args(["--server", "python3", "--sequential-arms", "--server", "python3"])
    assert [server.sequential_arms for server in cli.server_args.servers(args.servers)] == [True, False]


def test_a_server_named_by_a_relative_path_is_reached_from_its_sandbox_and_recorded_as_given(tmp_path, monkeypatch):
    """The fixture server copied into a folder and named relative to it, the probe running there: each start of
    the server runs in its sandbox's working folder, by the file's absolute path (spawn.reachable), while the
    records say the command, and its processes' command lines, as given: no record names the folder."""
    shutil.copy(FIXTURE, tmp_path / "server.py")
    monkeypatch.chdir(tmp_path)
    given = f"{sys.executable} server.py --leave-child"
    runs = runner.run_servers([Server("relative", given, slow_call=SLOW)], ["S1", "S5", "S13"], Options(WINDOW))
    assert {run["case"]: run["verdict"] for run in runs} == {"S1": OK, "S5": BUG, "S13": OK}
    arms = [arm for run in runs for arm in run["arms"].values()]
    assert all(arm["initialized"] and arm["command"] == given for arm in arms), [a.get("stderr") for a in arms]
    assert str(tmp_path) not in json.dumps(runs)
    with spawn.Supervisor() as supervisor, supervisor.arm_scope():
        started = session.Session(Server("relative", given))
        try:  # read once it answered: before, the read can land inside its exec (an empty command line)
            assert started.initialize(Options(WINDOW, "fast")), "the server never answered initialize"
            assert sample.cmdline(started.child.pid) == f"{sys.executable} {tmp_path}/server.py --leave-child"
            (server,) = [p for p in started.tree() if p["pid"] == started.child.pid]
            assert server["cmdline"] == given
        finally:
            started.end()


def test_the_cli_run_from_a_servers_folder_checks_it_by_its_relative_path(tmp_path):
    """`server "python server.py"` as its author runs it, and as the action's example gives it."""
    shutil.copy(FIXTURE, tmp_path / "server.py")
    given = f"{sys.executable} server.py"
    done = probe("server", given, "--only", "S1", "--window", str(WINDOW), cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    written = (tmp_path / "results.json").read_text()
    (run,) = json.loads(written)["runs"]
    assert run["verdict"] == OK, run["reason"]
    assert run["server"]["command"] == record.portable({"given": given})["given"]  # as a results file writes it
    assert str(tmp_path) not in written + done.stdout + done.stderr


SIDE_BY_SIDE_CHECKS = ["S1", "S3", "S5", "S6a", "S12", "S13"]


def test_a_server_that_locks_a_file_in_its_home_starts_in_every_arm_side_by_side():
    """Copies that refuse to start while another's lock file is in $HOME: each start has a HOME of its own, so
    every arm starts, side by side, and says its sandbox (folders relative to the run's folder)."""
    runs = runner.run_servers(
        [Server("locking", command("--lock-home"), slow_call=SLOW)], SIDE_BY_SIDE_CHECKS, Options(WINDOW)
    )
    assert {run["case"]: run["verdict"] for run in runs} == dict.fromkeys(SIDE_BY_SIDE_CHECKS, OK)
    # a shared arm once: its readers' copies are one start (its pid and start time)
    arms = list({(arm["pid"], arm["started_at"]): arm for run in runs for arm in run["arms"].values()}.values())
    assert all(arm["initialized"] for arm in arms), [arm.get("stderr") for arm in arms]
    homes = [arm["sandbox"]["HOME"] for arm in arms]
    assert len(set(homes)) == len(homes) and all(home.startswith("sandbox-") for home in homes), homes
    assert not any("side_by_side" in run for run in runs)


def test_copies_that_share_a_port_are_reported_as_interfering_not_judged_side_by_side():
    """A port the copies all bind, which no sandbox separates: side by side, a copy started while another
    holds it exits before it answers (inconclusive); the rerun one at a time decides, and the run says that the
    arms interfere, with the side by side verdict beside it."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = Server("port", command("--bind-port", str(port)), slow_call=SLOW)
    runs = runner.run_servers([server], SIDE_BY_SIDE_CHECKS, Options(WINDOW))
    assert {run["case"]: run["verdict"] for run in runs} == dict.fromkeys(SIDE_BY_SIDE_CHECKS, OK)
    told = [run for run in runs if run.get("side_by_side", {}).get("interfere")]
    assert told, [run["reason"] for run in runs]
    for run in told:
        assert run["side_by_side"]["verdict"] != OK and run["side_by_side"]["rerun_alone"] == OK
        assert runner.INTERFERE in run["reason"] and runner.INTERFERE in run["headline"]
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate({"runs": json.loads(json.dumps(runs))}, {**schema, "required": ["runs"]})


def test_an_eventfd_another_process_holds_is_a_wake_source():
    """The proof holds on the fixture's own eventfd, and fails once this process holds it too (pidfd_getfd)."""
    s = session.Session(Server("fixture", command("--blocking-writes", "--eventfd-loop")))
    try:
        assert s.initialize(Options(WINDOW))
        s.reader.pause()
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "large", "arguments": {}}}
        s.send(call)
        read_fd, pid = s.child.process.stdout.fileno(), s.child.pid
        assert s.child.wait_for(lambda: sample.pipe_fill(read_fd)["buffered"] == 65536, WINDOW)
        s.close_stdin()
        marker = (spawn.SERVER_MARKER, s.server_id)
        assert s.child.wait_for(
            lambda: hang.prove_blocked_on_pipe(pid, read_fd, marker=marker, foreign=True)["proven"], WINDOW
        )
        (target,) = [
            int(fd) for fd in os.listdir(f"/proc/{pid}/fd") if sample.fd_target(pid, int(fd)).endswith("[eventfd]")
        ]
        pidfd = os.pidfd_open(pid)
        held = ctypes.CDLL(None, use_errno=True).syscall(PIDFD_GETFD, pidfd, target, 0)
        assert held >= 0, os.strerror(ctypes.get_errno())
        try:
            why = hang.prove_blocked_on_pipe(pid, read_fd, marker=marker, foreign=True)["why_not"]
            assert why == f"watched fd {target} (anon_inode:[eventfd]) is also held by [{os.getpid()}]"
        finally:
            os.close(held)
            os.close(pidfd)
    finally:
        s.end()


def test_s12_a_batch_is_answered_by_an_array_naming_its_id():
    """An array answer is a line the reader keeps unparsed (a stand-in reader holds one): it answers the batch
    when it names the batch's id, and nothing else."""
    batch = next(frame for frame in s12_invalid_requests.frames(eras.LEGACY) if frame.name == "batch")
    array = SimpleNamespace(answers={}, messages=[{"unparsed": '[{"jsonrpc": "2.0", "id": 16, "result": {}}]'}])
    assert s12_invalid_requests.by_id(batch.id, array, array=True) == "an array answer naming its id"
    assert s12_invalid_requests.by_id(batch.id, array, array=False) == "no answer"
    assert s12_invalid_requests.by_id(17, array, array=True) == "no answer"

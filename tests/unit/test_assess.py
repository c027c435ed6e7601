"""Every probe's pure assess, and the verdict rule over it, on stored records: nothing is spawned.

Stored records: results/releases.json (L1-L13 on 65 mcp releases, schema 10: a sweep's summary, whose runs
have arms on the newest release, 2.3.0, only), the other results/*.json (L1-L10, L12 on a few releases, schema
4 and 5), results/servers.json and hosts.json (S1-S14 on real servers, H1-H11 on the pinned host recipes) and
tests/data/records/ (the sweep's full runs where a case's verdict changes, and on its first release; L1-L12
pinned, S1-S14 on the fixture server's defect shapes, H1-H11 on the fixture host's, and on its shapes of host:
a server per operation, a host that signals only the server's pid; README.md there has the commands).

Stale, and so left out where they no longer match: the schema-4 files (results.json, sdk-*.json,
client-cases-*.json) predate L1 and L2's server-API pair, so their L1 and L2 runs are judged without it;
they and the schema-5 l9 and l12 files predate the control's needs rules of L8-L10 (their 1.0.0 runs read
inconclusive where a run now says not_applicable: those rules are checked on the current files only) and
the mitigation status (only held is compared there); L8's and L9's records changed shape (the stuck
driver's proof) after client-cases-*.json and l9-*.json were made, so STALE leaves those out for them.

What no stored run shows (a mitigated arm showing the defect), and each way H6 and H8 find a defect (a
host stuck after the answer; H8: memory past its bound, no answer taken in, the call failed), is shown on stored records
changed by hand.
"""

from __future__ import annotations

import copy
import dataclasses
from functools import cache
from pathlib import Path

import pytest

from stdio_probe.core import runner, spawn
from stdio_probe.core.decide import decide, decide_check, mitigation
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.host import session
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report import record
from stdio_probe.sdk.cases import CASES
from stdio_probe.server import session as server_session
from stdio_probe.server.checks import CHECKS
from tests.paths import ROOT

PROBES = {**CASES, **CHECKS, **HOST_CHECKS}
RECORDS = sorted((ROOT / "tests" / "data" / "records").glob("*.json"))
STORED = sorted((ROOT / "results").glob("*.json")) + RECORDS
CURRENT = [ROOT / "results" / name for name in ("releases.json", "servers.json", "hosts.json")]
CURRENT += RECORDS
# files whose runs of a probe were made before its record or note last changed: (file name, probe id)
STALE = {("l9-1.0.0-to-2.3.0.json", "L9")}
STALE |= {(path.name, "L8") for path in (ROOT / "results").glob("client-cases-*.json")}


WRITTEN: dict[int, dict] = {}  # id of a run as record.read gives it -> the run as its file holds it


def _runs(paths: list[Path]) -> tuple[dict, ...]:
    """The runs with arms (an SDK that could not be made ready has none, nor a sweep summary's run on an older
    release) of files not stale for their probe, in the current schema's shape; WRITTEN keeps each as written
    (what an older file said beside the verdict)."""
    found = []
    for path in paths:
        for run, written in zip(record.read(path)["runs"], record.stored(path)["runs"], strict=True):
            if run["arms"] and (path.name, run["case"]) not in STALE:
                WRITTEN[id(run)] = written
                found.append(run)
    return tuple(found)


@cache
def stored_runs() -> tuple[dict, ...]:
    return _runs(STORED)


@cache
def current_runs() -> tuple[dict, ...]:
    return _runs(CURRENT)


def runs_of(probe_id: str, current: bool = False) -> list[dict]:
    """The stored runs of a probe; current: only those of files made since its record last changed shape."""
    return [run for run in (current_runs() if current else stored_runs()) if run["case"] == probe_id]


def judged(probe: Probe, run: dict) -> dict:
    """What decide says of a stored run now, by the rule the runner applies to its kind of subject: a server check
    whose arms interfered side by side is the rerun alone's (its arms), said against the side by side's."""
    if "server" in run:
        side = run.get("side_by_side", {})
        if side.get("interfere"):
            return runner.against_rerun(probe, decide_check(probe, side["arms"]), side["arms"], run["arms"])[0]
        return decide_check(probe, run["arms"])
    if not all(arm in run["arms"] for pair in probe.pairs.values() for arm in pair):
        probe = dataclasses.replace(probe, pairs={})  # a stale run, from before the probe had its pair
    return decide(probe, run["arms"])


def evidence(run: dict) -> list[dict]:
    """The arm records of a run that an assess reads: neither error nor not_applicable."""
    return [arm for arm in run["arms"].values() if not arm.get("error") and not arm.get("not_applicable")]


def test_every_probe_has_stored_records():
    assert {run["case"] for run in stored_runs()} == set(PROBES)


@pytest.mark.parametrize("probe_id", list(PROBES))
def test_stored_verdicts_are_what_assess_decides_now(probe_id):
    probe = PROBES[probe_id]
    for run in runs_of(probe_id):
        now = judged(probe, run)
        assert (now["verdict"], now["reason"]) == (run["verdict"], run["reason"]), (record.subject(run), now)
        written = WRITTEN[id(run)]  # files before schema 5 had no headline: record.read gives them their reason cut
        assert now["headline"] == written.get("headline", now["headline"])
        assert now.get("pairs") == run.get("pairs", now.get("pairs"))
        if probe_id in CASES:
            held, stored = mitigation(probe, run["arms"]), written["mitigation"]
            # files before the mitigation status (schema 4, 5) said held, and a note of their own when not applicable
            assert (held if "status" in stored else held["held"]) == (stored if "status" in stored else stored["held"])


@pytest.mark.parametrize("probe_id", list(PROBES))
def test_assess_is_pure(probe_id):
    """assess reads a record and changes nothing in it: the same record gives the same finding twice."""
    probe = PROBES[probe_id]
    for run in runs_of(probe_id)[:20]:
        for arm in evidence(run):
            kept = copy.deepcopy(arm)
            assert probe.assess(arm) == probe.assess(arm) and arm == kept


@pytest.mark.parametrize("probe_id", [probe_id for probe_id, probe in PROBES.items() if probe.needs])
def test_needs_rules_say_what_the_stored_records_say(probe_id):
    """A needs rule on a stored arm gives the not_applicable stored with it, or None where none is stored
    (an arm made not_applicable by something else, the fixture's own check, may pass the rule)."""
    probe = PROBES[probe_id]
    for run in runs_of(probe_id, current=True):
        for arm, rule in probe.needs.items():
            stored = run["arms"][arm]
            lacking = rule({key: value for key, value in stored.items() if key != "not_applicable"})
            if stored.get("not_applicable"):
                assert lacking in (None, stored["not_applicable"]), record.subject(run)
            else:
                assert lacking is None, record.subject(run)


def _shown(probe_id: str) -> set[bool | None]:
    return {PROBES[probe_id].assess(arm).shown for run in runs_of(probe_id) for arm in evidence(run)}


@pytest.mark.parametrize("probe_id", list(PROBES))
def test_stored_records_show_the_defect_and_its_absence(probe_id):
    assert {True, False} <= _shown(probe_id)


def _good_host_bug(probe_id: str) -> dict:
    run = next(run for run in runs_of(probe_id) if run["host"]["label"] == "good")
    return copy.deepcopy(run["arms"]["bug"])


def test_h6_and_h8_a_host_stuck_after_the_answer_shows_the_defect():
    stuck = next(run for run in runs_of("H5") if run["host"]["label"] == "hang-dead")["arms"]["bug"]["stuck"]
    for probe_id in ("H6", "H8"):
        bug = _good_host_bug(probe_id)
        assert HOST_CHECKS[probe_id].assess({**bug, "stuck": stuck}).shown is True


def test_h2_a_signal_that_lands_before_the_answer_is_logged_is_timed_from_the_call():
    """A host that signals the server the moment it reads the answer (stdin never closed) can end it between
    the answer's write and its log line: the signal is then timed from the call, not an undecided arm."""
    bug = _good_host_bug("H2")
    events = [e for e in bug["events"] if e["event"] not in ("stdin_eof", "answered")]
    assert any(e["event"] == "signal" for e in events)
    finding = HOST_CHECKS["H2"].assess({**bug, "events": events})
    assert finding.shown is False and "after the call (before the answer's log)" in finding.note, finding
    without_signal = [e for e in events if e["event"] != "signal"]
    assert HOST_CHECKS["H2"].assess({**bug, "events": without_signal}).shown is None
    failed = {**bug, "events": events, "host": {**bug["host"], "exit_code": 1}}  # signalled before it answered
    assert HOST_CHECKS["H2"].assess(failed).shown is None
    # a flood of the host's messages past the scenario server's log bounds (a method's, or more kinds than it
    # logs): the last request before the signal is unknown; a flood of bad lines leaves the requests logged
    signal_t = next(e["t"] for e in events if e["event"] == "signal")
    for kind, after, unknown in [("message tools/call", 200, True), ("other kinds", 0, True), ("bad_line", 200, False)]:
        flood = {"event": "messages_unlogged", "t": signal_t - 0.5, "kind": kind, "after": after}
        flooded = HOST_CHECKS["H2"].assess({**bug, "events": sorted([*events, flood], key=lambda e: e["t"])})
        if unknown:
            assert flooded.shown is None and "past the log's bound" in flooded.note, (kind, flooded)
        else:
            assert flooded.shown is False and "after the call (before the answer's log)" in flooded.note, flooded


def test_h8_memory_past_the_bound_or_no_answer_shows_the_defect():
    bug, h8 = _good_host_bug("H8"), HOST_CHECKS["H8"]
    assert h8.assess(bug).shown is False
    bug["host_peak_kib"] = bug["base_kib"] + 16 * 1024 * 11  # 11 times the 16 MiB answer
    assert h8.assess(bug).shown is True
    bug["host_peak_kib"] = bug["base_kib"]
    failed = {**bug, "host": {**bug["host"], "exit_code": 1, "stderr": "host failed: Connection closed\n"}}
    assert h8.assess(failed).shown is True
    said = "the call failed: the host exited 1 after the answer (host failed: Connection closed)"
    assert h8.assess(failed).note == said
    bug["events"] = [event for event in bug["events"] if event["event"] != "answered"]
    assert h8.assess(bug).note.startswith("the host exited")


def test_mitigation_is_not_held_when_the_mitigated_arm_shows_the_defect():
    arms = runs_of("L1")[-1]["arms"]
    held = mitigation(CASES["L1"], {**arms, "mitigated": arms["bug"]})
    assert held == {"held": False, "note": CASES["L1"].assess(arms["bug"]).note, "status": "not_held"}
    assert mitigation(CASES["L1"], {**arms, "mitigated": {"not_applicable": "no pipe"}})["held"] is None


def _stub(record_of_arm: dict, **fields) -> Probe:
    """A probe whose run_arm returns a copy of a given record (no process) and whose assess reads 'shown'."""
    return Probe(
        "T",
        "stub",
        ("bug", "control"),
        lambda arm, subject, options: dict(record_of_arm),
        lambda arm_record: Finding(arm_record["shown"], "n"),
        **fields,
    )


def test_probe_run_applies_the_arms_needs_rule_only_where_nothing_said_so_already():
    needs = {"control": lambda arm_record: "lacks it" if arm_record["shown"] else None}
    assert _stub({"shown": True}, needs=needs).run("control", None, Options())["not_applicable"] == "lacks it"
    assert "not_applicable" not in _stub({"shown": True}, needs=needs).run("bug", None, Options())
    assert "not_applicable" not in _stub({"shown": False}, needs=needs).run("control", None, Options())
    kept = _stub({"shown": True, "not_applicable": "fixture"}, needs=needs).run("control", None, Options())
    assert kept["not_applicable"] == "fixture"


def _trials_of(*records: dict, trials: int = 3, settles=None) -> tuple[dict, list[dict]]:
    """runner.run_trials over a stub probe whose trials give records in turn: the arm's record, and those run."""
    given, ran = iter(records), []

    def run() -> dict:
        ran.append(next(given))
        return dict(ran[-1])

    stub = dataclasses.replace(_stub({}), trials=trials, settles=settles)
    with spawn.Supervisor() as supervisor:  # ended: one left open would keep the worker's last one from reaping
        return runner.run_trials(supervisor, {"T": stub}, run)["T"], ran


def test_a_repeated_arm_stops_at_the_first_trial_that_shows_the_defect_or_has_no_evidence():
    record, ran = _trials_of({"shown": False}, {"shown": True, "n": 2}, {"shown": False})
    assert record == {"shown": True, "n": 2, "trials": {"run": 2, "shown": 1}} and len(ran) == 2
    record, ran = _trials_of({"shown": False}, {"shown": False}, {"shown": False}, {"shown": True})
    assert record["trials"] == {"run": 3, "shown": 0} and len(ran) == 3
    for silent in ({"shown": None}, {"error": "boom"}, {"not_applicable": "no API"}):
        record, ran = _trials_of({"shown": False}, silent, {"shown": True})
        assert record == {**silent, "trials": {"run": 2, "shown": 0}} and len(ran) == 2
    record, ran = _trials_of({"shown": False}, {"shown": True}, trials=1)
    assert record == {"shown": False} and len(ran) == 1


def test_an_arm_read_by_several_probes_is_tried_until_each_is_decided_and_each_keeps_its_own_trial():
    """A shared arm (Probe.same_arms): its owner, run once, keeps the first trial (the same record); a reader whose
    defect can hide in one run keeps the trial that showed it; one whose race a trial settled keeps that trial."""
    given = iter([{"shown": False, "n": 1}, {"shown": False, "n": 2}, {"shown": True, "n": 3}, {"shown": True}])
    ran = []

    def run() -> dict:
        ran.append(next(given))
        return ran[-1]

    owner, rated = _stub({}), dataclasses.replace(_stub({}), trials=5)
    settled = dataclasses.replace(rated, settles=_at_two)
    with spawn.Supervisor() as supervisor:
        decided = runner.run_trials(supervisor, {"owner": owner, "rated": rated, "settled": settled}, run)
    assert len(ran) == 3 and decided["owner"] == ran[0] and decided["owner"] is not ran[0]
    assert decided["rated"] == {"shown": True, "n": 3, "trials": {"run": 3, "shown": 1}}
    assert decided["settled"] == {"shown": False, "n": 2, "trials": {"run": 2, "shown": 0, "settled": "n is 2"}}


def test_a_reader_that_cannot_read_a_trial_is_decided_on_it_and_leaves_the_others_theirs():
    """One reader's assess raising (an odd record) gives that reader the error; the owner keeps its trial, and a
    note that fails on one reader's record lands on no other's (each keeps a copy)."""

    def broken(record: dict) -> Finding:
        raise KeyError("trigger")

    owner, rated = _stub({}), dataclasses.replace(_stub({}), trials=5, assess=broken)
    with spawn.Supervisor() as supervisor:
        readers = {"owner": owner, "rated": rated}
        records = runner.run_arm(supervisor, "x", "bug", readers, lambda: {"shown": False}, runner.unwatched)
    assert "error" not in records["owner"] and records["owner"]["shown"] is False
    assert records["rated"]["error"] == "cannot assess: KeyError: 'trigger'" and records["rated"]["trials"]["run"] == 1


def test_a_signal_settles_a_race_only_where_no_code_of_the_servers_ran_on_any_signal():
    """Killed by the signal at its default action, or ignored and ended by SIGKILL: settled (S9, S11, S14). Ignored
    and ended by the probe's SIGTERM (which it may handle: the race again), caught, or unknown: tried again."""
    killed = {"trigger": "SIGTERM", "sigterm": "default", "signal": "SIGTERM", "exit_code": -15}
    assert PROBES["S14"].settles(killed) == "SIGTERM had its default action: the kernel ended it, no handler ran"
    assert PROBES["S11"].settles(killed) == PROBES["S14"].settles(killed)
    ignored = {"trigger": "SIGINT", "sigint": "ignored", "signal": "SIGKILL", "exit_code": -9}
    assert PROBES["S14"].settles(ignored) == "SIGINT was ignored and SIGKILL ended it: no code of its ran on a signal"
    for other in (
        ignored | {"signal": "SIGTERM", "exit_code": -15},
        killed | {"sigterm": "caught"},
        killed | {"sigterm": None},
        killed | {"signal": None, "exit_code": 0},
    ):
        assert PROBES["S14"].settles(other) is None, other


def test_a_trial_that_settles_the_race_ends_the_trials_and_says_why():
    record, ran = _trials_of({"shown": False, "n": 1}, {"shown": False, "n": 2}, {"shown": True}, settles=_at_two)
    assert record == {"shown": False, "n": 2, "trials": {"run": 2, "shown": 0, "settled": "n is 2"}}
    assert len(ran) == 2
    record, ran = _trials_of({"shown": False, "n": 1}, {"shown": True, "n": 2}, settles=_at_two)
    assert record["trials"] == {"run": 2, "shown": 1}, "a trial that shows the defect is never called settled"


def _at_two(record: dict) -> str | None:
    return "n is 2" if record.get("n") == 2 else None


def test_s8_is_settled_by_any_ending_but_sigpipe():
    ended = {"initialized": True, "exit_after_s": 0.1, "exit_code": 0, "signal": None}
    assert PROBES["S8"].settles(ended) == "it ended (exit 0), not killed by SIGPIPE"
    assert PROBES["S8"].settles(ended | {"exit_code": -6, "signal": "SIGABRT"}) == (
        "it ended (signal SIGABRT), not killed by SIGPIPE"
    )
    assert PROBES["S8"].settles(ended | {"exit_code": -13, "signal": "SIGPIPE"}) is None
    finding = server_session.rated(Finding(False, "ended (exit 0)"), {"run": 1, "shown": 0, "settled": "it ended"})
    assert finding.note == "shown in 0 of 1 trials (no more: it ended); the last: ended (exit 0)"


def test_s9_is_settled_only_by_sigints_default_action():
    ended = {"initialized": True, "exit_after_s": 0.1, "exit_code": -2, "signal": "SIGINT"}
    assert PROBES["S9"].settles(ended | {"sigint": "default"}) == (
        "SIGINT had its default action: the kernel ended it, no handler ran"
    )
    for other in ({"sigint": "caught"}, {"sigint": None}, {}, {"sigint": "default", "signal": None, "exit_code": 0}):
        assert PROBES["S9"].settles(ended | other) is None, other


def test_a_repeated_arm_says_k_of_n_trials_in_its_note_and_headline():
    """The stored repeated arms (S7, S8, S9 on the fixture: tests/data/records/servers-rate.json) say how many
    trials ran and how many showed the defect; a drop once in 17 trials is the defect."""
    runs = [run for run in current_runs() if "trials" in run["arms"].get("bug", {})]
    assert {run["case"] for run in runs} == {"S7", "S8", "S9"}
    for run in runs:
        trials, finding = run["arms"]["bug"]["trials"], PROBES[run["case"]].assess(run["arms"]["bug"])
        assert finding.shown is bool(trials["shown"]) and run["headline"].startswith(f"{trials['shown']} of ")
        assert f"shown in {trials['shown']} of {trials['run']} trials; " in finding.note
    racy = next(run for run in runs if run["server"]["label"] == "drop-at-eof-sometimes" and run["case"] == "S7")
    assert racy["verdict"] == "reproduced" and racy["arms"]["bug"]["trials"]["run"] > 1
    stripped = {key: value for key, value in racy["arms"]["bug"].items() if key != "trials"}
    assert PROBES["S7"].assess(stripped).note == racy["reason"].split("; that trial: ", 1)[1]


def test_probe_note_never_asks_assess_about_an_arm_without_evidence():
    stub = _stub({})
    assert stub.note({"error": "boom"}) == "boom" and stub.note({"not_applicable": "no API"}) == "no API"
    assert stub.note({"shown": True}) == "n"


def test_h9_gaps_of_tens_of_ms_that_happen_to_grow_are_no_back_off():
    """Start-up alone varied a no-back-off host's crash-loop gaps 0.04, 0.05, 0.09 s (1.8-fold): growth must
    also be GROWTH_MIN_S long to count; a host waiting 0.3 s, then doubling, backs off."""
    bug = next(
        copy.deepcopy(run["arms"]["bug"])
        for run in runs_of("H9")
        if sum(e["event"] == "start" for e in run["arms"]["bug"].get("events", ())) >= 5
    )
    starts = [e for e in bug["events"] if e["event"] == "start"]

    def with_gaps(*gaps: float) -> dict:
        t = starts[1]["t"]
        for event, gap in zip(starts[2:5], gaps, strict=True):
            t += gap
            event["t"] = t
        return copy.deepcopy(bug)

    assert HOST_CHECKS["H9"].assess(with_gaps(0.04, 0.05, 0.09)).shown is True
    assert HOST_CHECKS["H9"].assess(with_gaps(0.35, 0.65, 1.25)).shown is False


def test_l12_a_server_that_exited_before_it_waited_for_input_says_so():
    """The wait for an idle server ends on its exit too: that arm says it exited, not that it never idled."""
    run = next(run for run in runs_of("L12") if run["arms"]["bug"].get("idle"))
    never_idle = {**run["arms"]["bug"], "idle": False, "ended_by": "SIGTERM", "exit_code": -15}
    assert CASES["L12"].assess(never_idle).note == "the server was never seen waiting for input"
    exited = {**never_idle, "ended_by": "self", "exit_code": 1}
    finding = CASES["L12"].assess(exited)
    assert finding.shown is None and finding.note == "the server exited (exit 1) before it waited for input"


def _s13_arms(label: str) -> dict:
    """The arms of S13's stored run on the fixture server of label (tests/data/records/servers-s13.json)."""
    return copy.deepcopy(next(run for run in runs_of("S13") if run["server"]["label"] == label)["arms"])


def test_s13_an_error_at_eof_is_the_servers_only_beside_a_control_that_got_the_tools_result():
    """The control's answer is the tool's real result: the bug arm's error (a JSON-RPC error or an isError
    result) counts only where the control got a result; a control without one leaves nothing to compare with,
    and a bug arm answered before stdin closed had no call in flight."""
    s13, arms = CHECKS["S13"], _s13_arms("cancel-at-eof")
    assert decide_check(s13, arms)["verdict"] == "reproduced"
    assert "error -32000 Connection closed" in decide_check(s13, arms)["reason"]
    tool_error = {"kind": "tool_error", "text": "isError result 'no such row'"}
    assert s13.assess({**arms["bug"], "answer": tool_error}).shown is True
    failed = decide_check(s13, {**arms, "control": {**arms["control"], "answer": tool_error}})
    assert failed["verdict"] == "inconclusive" and "no result to compare" in failed["reason"]
    assert s13.assess({**arms["bug"], "answered_before_eof": True}).shown is None
    result = _s13_arms("well")["bug"]["answer"]
    assert s13.assess({**arms["bug"], "answer": result}).shown is False


def test_s13_a_server_alive_after_eof_shows_the_defect_whatever_the_answer():
    s13, stuck = CHECKS["S13"], _s13_arms("stuck-at-eof")["bug"]
    assert s13.assess(stuck).shown is True and s13.assess(stuck).short == "alive 3.0 s after EOF"
    answered = {**stuck, "answer": _s13_arms("well")["bug"]["answer"], "answer_after_call_s": 0.5}
    assert s13.assess(answered).shown is True


def test_h5_a_host_gone_before_the_server_stamped_its_exit_is_timed_before_it_not_negative():
    bug = _good_host_bug("H5")
    died = next(e for e in bug["events"] if e["event"] == "exit" and e["launch"] == 1)
    finding = HOST_CHECKS["H5"].assess({**bug, "host_exit_t": died["t"] - 0.02})
    assert finding.shown is False and "exited 0.02 s before the server died" in finding.note, finding
    assert "-" not in finding.short


def _h11_bug(label: str) -> dict:
    return copy.deepcopy(next(run for run in runs_of("H11") if run["host"]["label"] == label)["arms"]["bug"])


def test_h11_a_host_that_gave_up_on_the_call_is_not_shown_each_step_timed_even_if_it_then_hung():
    """The fixture host with --call-timeout 1: cancel, stdin closed, exit, each timed from the call, the first
    deciding. A host that cancels and then waits forever (no EOF, no exit) gave up too: H11 is not shown, its
    hang after the cancel is recorded; one that did nothing but wait is shown (proof or idle window)."""
    h11, timed, proven = HOST_CHECKS["H11"], _h11_bug("call-timeout"), _h11_bug("hang-dead")
    finding = h11.assess(timed)
    assert finding.shown is False and finding.short.startswith("cancel at +1."), finding
    assert "stdin closed at +1." in finding.note and "exit 1 at +1." in finding.note
    cancelled = [e for e in timed["events"] if e["event"] not in ("stdin_eof", "signal")]
    hung = {**{k: v for k, v in timed.items() if k != "exited"}, "events": cancelled, "stuck": proven["stuck"]}
    finding = h11.assess(hung)
    assert finding.shown is False and "then host proven waiting forever" in finding.note, finding
    assert h11.assess(proven).shown is True and "proven waiting forever" in h11.assess(proven).note
    no_bound = _h11_bug("good")  # its poll loop has a timeout: the idle window decides
    window = h11.assess(no_bound)
    assert window.shown is True and f"idle the last {no_bound['stuck']['idle_s']:.1f} s (window)" in window.note
    assert no_bound["stuck"]["idle_s"] >= 3, no_bound["stuck"]


def test_s12_a_frame_unanswered_is_shown_only_once_what_came_back_is_final():
    """A frame without an answer shows the defect once the server was proven idle or its stdout ended after EOF;
    before that (no proof, stdout open a window after EOF) or with the marker unanswered there is no evidence."""
    s12 = CHECKS["S12"]
    well = next(copy.deepcopy(run["arms"]["bug"]) for run in runs_of("S12") if run["server"]["label"] == "well")
    assert s12.assess(well).shown is False
    well["id_null"] = [null for null in well["id_null"] if null["code"] != -32700]
    finding = s12.assess(well)
    assert finding.shown is True and finding.short == "1 of 7 unanswered: not JSON", finding
    assert s12.assess({**well, "settled_by": "stdout_end"}).note.startswith("stdout ended after stdin EOF: deep:")
    assert s12.assess({**well, "settled_by": None}).shown is None
    mute = next(run["arms"]["bug"] for run in runs_of("S12") if run["server"]["label"] == "mute-json")
    assert s12.assess(mute).shown is None and s12.assess(mute).brief == "marker unanswered"


def test_s12_an_error_with_id_null_answers_only_a_frame_whose_id_a_server_may_not_read():
    """mcp-time (mcp-go) answers the batch and the parse error each with -32700 and id null, and the frames
    with a readable id with their id: all answered. The parse error takes a -32700 only, the batch any other
    id-null error; one with id null answers no frame whose id could be read."""
    s12 = CHECKS["S12"]
    well = next(copy.deepcopy(run["arms"]["bug"]) for run in runs_of("S12") if run["server"]["label"] == "well")
    dropped = {**well, "frames": [{**frame, "answer": "no answer"} for frame in well["frames"]], "id_null": []}
    parse_errors = [{"code": -32700, "answer": f"error -32700 {text}"} for text in ("Failed to parse", "Parse error")]
    both = {**well, "frames": [f if f["id_readable"] else {**f, "answer": "no answer"} for f in well["frames"]]}
    assert s12.assess({**both, "id_null": parse_errors}).shown is False
    assert s12.assess({**both, "id_null": parse_errors[:1]}).short == "1 of 7 unanswered: batch"
    refused = [{"code": -32600, "answer": "error -32600 Invalid Request"}]
    assert s12.assess({**both, "id_null": refused}).short == "1 of 7 unanswered: not JSON"
    assert s12.assess({**dropped, "id_null": refused * 5 + parse_errors}).short.startswith("5 of 7 unanswered: deep")


def _host_arm(probe_id: str, label: str, arm: str = "bug") -> dict:
    """An arm of a stored host run: tests/data/records/hosts.json (the fixture host's defect shapes) or
    hosts-shapes.json (per-operation, per-operation-direct: a server per operation; term-at-once)."""
    run = next(run for run in runs_of(probe_id) if run["host"]["label"] == label)
    return copy.deepcopy(run["arms"][arm])


def test_how_a_host_used_its_servers_is_read_from_what_the_launches_did():
    """A new server after the host ended the one before (its EOF, no crash) is a server per operation; one that
    starts while another still serves, several at once; relaunches after a crash leave a host one server."""
    shape = session.server_shape
    assert shape(_host_arm("H1", "good", "control")["events"]) == "one server"
    assert shape(_host_arm("H9", "reconnect")["events"]) == "one server"  # 7 launches, each after a crash
    per_operation = _host_arm("H1", "per-operation", "control")["events"]
    assert shape(per_operation) == "a server per operation"
    first_eof = next(e["t"] for e in per_operation if e["event"] == "stdin_eof" and e["launch"] == 1)
    early = [{**e, "t": first_eof - 0.001} if e["event"] == "start" and e["launch"] == 2 else e for e in per_operation]
    assert shape(early) == "several at once"


def test_h9_a_server_per_operation_is_no_relaunch_a_launch_after_its_crash_is():
    """The per-operation host's launch 2 (its call's) dies at start and nothing follows: not_applicable. Had a
    launch followed that crash, the host relaunched: judged, not_applicable no longer."""
    h9, bug = HOST_CHECKS["H9"], _host_arm("H9", "per-operation")
    crashed = next(e for e in bug["events"] if e["event"] == "exit" and e["launch"] == 2)
    assert h9.needs["bug"](bug).startswith(f"does not reconnect: no relaunch after launch 2 (pid {crashed['pid']})")
    relaunch = [{"event": "start", "launch": 3, "pid": crashed["pid"] + 1, "t": crashed["t"] + 0.5}]
    relaunch.append({"event": "exit", "launch": 3, "code": 1, "pid": crashed["pid"] + 1, "t": crashed["t"] + 0.51})
    relaunched = {**bug, "events": bug["events"] + relaunch}
    assert h9.needs["bug"](relaunched) is None
    finding = h9.assess(relaunched)
    assert finding.shown is False
    assert finding.note == "3 launches (a server per operation): gave up after the crash loop", finding


def test_h3_and_h10_name_the_server_each_note_is_about():
    """H3: each server's gone time from its own EOF. H10: the call's server, alive after the host's kill, got no
    signal; the list server's SIGTERM (at its close) is not its."""
    h3 = _host_arm("H3", "per-operation")
    note = HOST_CHECKS["H3"].assess(h3).note
    for server in session.launches(h3["events"]):
        eof = next(e["t"] for e in h3["events"] if e["event"] == "stdin_eof" and e["launch"] == server["launch"])
        gone = h3["server_gone_t"][str(server["pid"])] - eof
        assert f"{session.named(server)}: SIGTERM" in note and f"gone {gone:.2f} s after EOF" in note, note
    h10 = _host_arm("H10", "per-operation-direct")
    first, call = session.launches(h10["events"])
    assert any(e["event"] == "signal" and e["pid"] == first["pid"] for e in h10["events"])
    finding = HOST_CHECKS["H10"].assess(h10)
    assert finding.shown is True and finding.note.startswith(f"{session.named(call)}: server alive"), finding
    assert finding.note.endswith("(no signal)"), finding


def test_h4_a_stuck_host_that_signalled_only_the_wrapper_is_judged_on_its_child():
    """The wrapper got SIGTERM, its child none; the host never exited, and the child outlived the probe's kill of
    it: shown. A stuck host that signalled nothing (it never began to end the server), or a record with no kill
    (made before the probe killed stuck hosts), is no evidence."""
    h4, wrapper = HOST_CHECKS["H4"], _host_arm("H4", "term-at-once", "wrapper")
    finding = h4.assess(wrapper)
    real = next(e["pid"] for e in wrapper["events"] if e["event"] == "real_server")
    assert finding.shown is True and f"never signalled alive 1 s after the probe killed it: {real} " in finding.note
    unsignalled = {**wrapper, "events": [e for e in wrapper["events"] if e["event"] != "signal"]}
    assert h4.assess(unsignalled).shown is None and h4.assess(unsignalled).brief == "host never exited"
    unkilled = {key: value for key, value in wrapper.items() if key != "killed_t"}
    assert h4.assess({**unkilled, "survivors": []}).shown is None


def test_a_check_that_reads_its_owners_rerun_says_so_when_the_two_disagree():
    """S10 on a server that stays after EOF (inconclusive side by side) takes no rerun of its own: it reads S1's
    (runner.Servers). A rerun in which the server exited cleanly turns both checks, and S10's record still names
    its arm as S1's: the arm it is judged on is the rerun S1 made."""
    fixture_shapes = _runs([ROOT / "tests" / "data" / "records" / "servers.json"])
    stored = {(run["server"]["label"], run["case"]): run for run in fixture_shapes}
    stays, exits = stored[("no-exit", "S1")]["arms"]["bug"], stored[("well", "S1")]["arms"]["bug"]
    servers = runner.Servers([Server("x", "x")], ["S1", "S10"], eras=[{"protocol": "legacy", "version": "1"}])
    side = {runner.Job(0, "S1", "bug"): stays, runner.Job(0, "S10", "bug"): stays}  # S1's run decided both
    rerun = runner.Job(0, "S1", "bug", server_session.RATE_TRIALS)
    assert servers.reruns(side) == [rerun]
    exits = {**exits, "trials": {"run": 21, "shown": 0}}  # as a rerun of S1's records it: its rate, not S10's
    runs = {run["case"]: run for run in servers.runs({**side, rerun: exits})}
    s10 = runs["S10"]
    assert s10["side_by_side"]["interfere"] and s10["side_by_side"]["rerun_alone"] == "not_reproduced"
    assert s10["shared_arms"] == {"bug": "S1 bug"} and "trials" not in s10["arms"]["bug"]
    assert "shared_arms" not in runs["S1"] and runs["S1"]["side_by_side"]["interfere"]
    assert runs["S1"]["arms"]["bug"]["trials"] == {"run": 21, "shown": 0}

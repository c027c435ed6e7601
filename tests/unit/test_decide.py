"""The verdict rule on hand-made records: not_applicable, extra arms, and the bug/control rule."""

from __future__ import annotations

from stdio_probe.core.decide import decide, decide_check, mitigation
from stdio_probe.core.model import BRIEF_CHARS, Finding, Probe
from stdio_probe.core.runner import INTERFERE, against_rerun


def _probe(assess) -> Probe:
    """A probe whose records say what they show: decide reads only assess, arms and pairs."""

    def run_arm(arm, subject, options):
        raise AssertionError("decide never runs an arm")

    return Probe("T", "test probe", ("bug", "control", "mitigated", "crash_loop"), run_arm, assess)


CASE = _probe(lambda record: Finding(record["shown"], record["note"]))


def test_any_arm_not_applicable_makes_the_case_not_applicable():
    arms = {"bug": {"not_applicable": "no listen"}, "control": {"shown": False, "note": "n"}}
    assert decide(CASE, arms) == {
        "verdict": "not_applicable",
        "reason": "bug arm: no listen",
        "headline": "bug arm: no listen",
    }


def test_extra_arms_add_their_note_but_never_the_verdict():
    arms = {
        "bug": {"shown": True, "note": "b"},
        "control": {"shown": False, "note": "c"},
        "mitigated": {"shown": True, "note": "m"},  # judged by mitigation(), not in the reason
        "crash_loop": {"shown": True, "note": "x"},
    }
    assert decide(CASE, arms) == {
        "verdict": "reproduced",
        "reason": "bug: b; control: c; crash_loop: x",
        "headline": "b",
    }


def test_control_showing_the_defect_is_inconclusive():
    arms = {"bug": {"shown": True, "note": "b"}, "control": {"shown": True, "note": "c"}}
    assert decide(CASE, arms)["verdict"] == "inconclusive"


def test_headline_is_the_bug_arms_short_form_or_its_note_cut():
    arms = {"bug": {"shown": True, "note": "b"}, "control": {"shown": False, "note": "c"}}
    short = _probe(lambda record: Finding(record["shown"], "a long note " * 20, "in few words"))
    assert decide(short, arms)["headline"] == "in few words"
    cut = decide(_probe(lambda record: Finding(record["shown"], "a long note " * 20)), arms)
    assert (
        len(cut["headline"]) <= BRIEF_CHARS
        and cut["headline"].startswith("a long note a")
        and cut["headline"][-1] == "…"
    )


def test_headline_of_an_inconclusive_case_names_the_arm_that_decided_it():
    arms = {"bug": {"shown": True, "note": "b"}, "control": {"shown": True, "note": "c"}}
    assert decide(CASE, arms)["headline"] == "control too: c"
    arms["bug"] = {"shown": None, "note": "no checkpoints"}
    assert decide(CASE, arms)["headline"] == "no evidence: no checkpoints"


def test_mitigation_status_tells_a_contract_that_could_not_be_evaluated_from_one_that_does_not_apply():
    pair = {"bug": {"shown": True, "note": "b"}, "control": {"shown": False, "note": "c"}}
    status = {
        name: mitigation(CASE, {**pair, "mitigated": record})["status"]
        for name, record in {
            "held": {"shown": False, "note": "m"},
            "not_held": {"shown": True, "note": "m"},
            "not_evaluated": {"error": "ValueError: filedescriptor out of range in select()"},
            "silent": {"shown": None, "note": "no checkpoints"},
            "not_applicable": {"not_applicable": "no ClientSessionGroup"},
            "rule_lacking": {"contract_not_applicable": "no PROCESS_TERMINATION_TIMEOUT", "shown": None, "note": "-"},
        }.items()
    }
    assert status == {
        "held": "held",
        "not_held": "not_held",
        "not_evaluated": "not_evaluated",
        "silent": "not_evaluated",
        "not_applicable": "not_applicable",
        "rule_lacking": "not_applicable",
    }
    lacking = {**pair, "bug": {"not_applicable": "no listen"}, "mitigated": {"shown": None, "note": "-"}}
    assert mitigation(CASE, lacking) == {"held": None, "note": "bug arm: no listen", "status": "not_applicable"}


CHECK = Probe("SX", "a check of two triggers", ("eof", "sigterm"), CASE.run_arm, CASE.assess)


def test_a_rerun_alone_that_agrees_leaves_the_side_by_side_run_as_it_was():
    arms = {"eof": {"shown": True, "note": "alive"}, "sigterm": {"shown": False, "note": "exited"}}
    alone = {"eof": {"shown": True, "note": "alive again"}, "sigterm": {"shown": False, "note": "exited"}}
    verdict = decide_check(CHECK, arms)
    assert against_rerun(CHECK, verdict, arms, alone) == (
        verdict, arms, {"verdict": "reproduced", "rerun_alone": "reproduced", "interfere": False}
    )


def test_a_rerun_alone_that_disagrees_decides_and_says_the_arms_interfere():
    """Side by side a copy found no answer (another held its port): no evidence; alone, none shows the defect."""
    arms = {"eof": {"shown": None, "note": "no answer to initialize"}, "sigterm": {"shown": False, "note": "exited"}}
    alone = {"eof": {"shown": False, "note": "exited"}, "sigterm": {"shown": False, "note": "exited"}}
    side = decide_check(CHECK, arms)
    verdict, kept, said = against_rerun(CHECK, side, arms, alone)
    assert verdict["verdict"] == "not_reproduced" and kept == alone
    assert verdict["reason"].startswith(f"{INTERFERE}: inconclusive side by side, not_reproduced one at a time; ")
    assert verdict["headline"].startswith(f"{INTERFERE}: ")
    assert said == {
        "verdict": "inconclusive", "rerun_alone": "not_reproduced", "interfere": True,
        "reason": side["reason"], "arms": arms,
    }

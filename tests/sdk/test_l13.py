"""L13 on the pinned SDK (the raw facts its notes come from), on SDK copies fixed each way, and its assess on
stored records.

The first fix (tests/sdk_fixes.py FIX_L13: the server answers an error in both shapes) runs with both methods
in test_honesty.py. Here, with both methods too: L13-exits (the server ends, and its stdout with it), and each
half of FIX_L13 alone, which answers one shape of the fatal error and leaves the other reproduced: the two
shapes are judged apart (the verdict on sys.exit, the pair on the surrogate result).
"""

from __future__ import annotations

import copy
import json
from functools import cache

import pytest

from stdio_probe.core.model import Options
from stdio_probe.sdk.cases.l13_fatal_tool import EXIT_CODE, PROBE, cause
from tests.paths import ROOT

WINDOW = Options(method="window", window=3.0)  # the window method, with a shorter window than the default 10 s
PAIR = "surrogate result"
# each fix: (the verdict, the surrogate pair's verdict)
FIXED = {
    "L13-exits": ("not_reproduced", "not_reproduced"),
    "L13-catch-exit": ("not_reproduced", "reproduced"),
    "L13-writer-error": ("reproduced", "not_reproduced"),
}


def test_pinned_the_call_is_never_answered_and_the_server_lives_on_mute(runs):
    """The fast method: L13 in the session's full run of the pinned SDK (conftest.py: pinned_run)."""
    assert_mute(runs["L13"], Options())


def test_pinned_the_call_is_never_answered_and_the_server_lives_on_mute_by_the_window(pinned, run_cases):
    assert_mute(run_cases(pinned, ["L13"], WINDOW)["L13"], WINDOW)


def assert_mute(run: dict, options: Options) -> None:
    """The pinned SDK's L13 as options ran it: neither shape answered, the server alive and mute until EOF."""
    assert run["verdict"] == "reproduced", run["reason"]
    assert run["pairs"][PAIR]["verdict"] == "reproduced", run["pairs"]
    bug, surrogate, control, mitigated = (run["arms"][a] for a in ("bug", "bug_surrogate", "control", "mitigated"))
    for record in (bug, surrogate):
        call = record["call"]
        assert call["answer"] is None and call["alive_at_decision"] and not call["stdout_ended"], call
        # a loaded machine can keep the exiting server busy (its traceback) past the window: then the window decides
        assert call["decided_by"] in (("proof", "window") if options.method == "fast" else ("window",)), call
        if call["decided_by"] == "proof":
            assert ("read", "anon_pipe_read") in {(t["syscall"], t["wchan"]) for t in call["threads"]}, call
        # only the probe's closing stdin ends it, the call still unanswered
        assert record["after_eof"]["decided_by"] == "exit" and record["after_eof"]["answer"] is None
        assert record["ended_by"] == "self"
    assert bug["exit_code"] == EXIT_CODE and cause(bug["stderr"]) == f"SystemExit: {EXIT_CODE}"
    assert surrogate["exit_code"] == 1 and cause(surrogate["stderr"]).startswith("PydanticSerializationError")
    assert control["call"]["answer"] == "error result" and control["exit_code"] == 0
    assert (mitigated["request"]["answered"], mitigated["request"]["answer"]) == (False, None)
    assert mitigated["shutdown"]["ended_by"] in ("self", "SIGTERM") and run["mitigation"]["held"] is True


@pytest.mark.parametrize("method", ["fast", "window"])
@pytest.mark.parametrize("fix", list(FIXED))
def test_each_fix_is_seen_by_both_methods(fix, method, fixed, run_cases):
    run = run_cases(fixed(fix), ["L13"], Options() if method == "fast" else WINDOW)["L13"]
    assert (run["verdict"], run["pairs"][PAIR]["verdict"]) == FIXED[fix], run["reason"]
    assert run["mitigation"]["held"] is True, run["mitigation"]["note"]


@cache
def _stored() -> dict:
    """The L13 runs of the release sweep (results/releases.json), by release."""
    runs = json.loads((ROOT / "results" / "releases.json").read_text())["runs"]
    return {run["sdk"]["version"]: run for run in runs if run["case"] == "L13"}


def _arm(version: str, arm: str) -> dict:
    return copy.deepcopy(_stored()[version]["arms"][arm])


def test_assess_a_server_that_ends_or_closes_stdout_without_answering_shows_no_defect():
    """The host's call then fails at stdout's EOF: a crash the host sees, not a mute server."""
    bug = _arm("2.3.0", "bug")
    assert PROBE.assess(bug).shown is True
    exited = copy.deepcopy(bug)
    exited["call"].update(alive_at_decision=False, decided_by="exit", exit_after_call_s=0.3)
    finding = PROBE.assess(exited)
    assert finding.shown is False and "no answer, exited 0.30 s after the tool's call" in finding.note
    closed = copy.deepcopy(bug)
    closed["call"]["stdout_ended"] = True
    assert PROBE.assess(closed).shown is False and PROBE.assess(closed).brief == "no answer, stdout ended"


def test_assess_the_contract_holds_only_when_the_server_ends_by_itself_or_sigterm():
    mitigated = _arm("2.3.0", "mitigated")
    assert PROBE.assess(mitigated).shown is False
    for ended_by, shown in (("SIGTERM", False), ("SIGKILL", True), (None, True)):
        mitigated["shutdown"]["ended_by"] = ended_by
        assert PROBE.assess(mitigated).shown is shown, ended_by


def test_assess_without_a_call_says_so():
    bug = _arm("2.3.0", "bug")
    assert PROBE.assess({**bug, "tool_called": False}).shown is None
    assert PROBE.assess({**bug, "serving": False}).brief == "never served"


def test_cause_is_the_last_exception_stderr_names_boxed_or_not():
    boxed = "│ │ │ SystemExit: 3       │ │ │\n│ ╰──╯ │\n"
    grouped = "  | ExceptionGroup: unhandled errors\n    | pydantic_core._pydantic_core.PydanticSerializationError: x\n"
    assert cause(boxed) == "SystemExit: 3"
    assert cause(grouped) == "PydanticSerializationError: x"
    assert cause("nothing raised\n") is None

"""L11 on the pinned SDK (the raw facts its notes come from), on SDK copies fixed each way, and without a server API."""

from __future__ import annotations

import mcp.client.stdio as stdio
import pytest

from stdio_probe.core.host_contract import termination_grace
from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.sdk.cases.l11_lifespan_cleanup import assess, ended_by
from stdio_probe.sdk.driver import checkpoint

WINDOW = Options(method="window", window=5.0)  # the window method, with a shorter window than the default 10 s
# each fix of L11 (tests/sdk_fixes.py): the client's grace, and the server abandoning the tool's thread on cancel
FIXES = ["L11", "L11-abandon-thread"]


def _run(sdk, options: Options) -> dict:
    [run] = run_matrix([sdk], ["L11"], options)
    return run


def _logged(record: dict) -> list[str]:
    return [e["name"] if e["event"] == "signal" else e["event"] for e in record["server"]["events"]]


@pytest.fixture
def l11_run(pinned_run) -> dict:
    """L11 in the session's full run of the pinned SDK (conftest.py: pinned_run)."""
    return pinned_run["runs"]["L11"]


def test_the_sync_tool_takes_the_cleanup_with_it(l11_run):
    assert l11_run["verdict"] == "reproduced", l11_run["reason"]
    bug, control, mitigated = (l11_run["arms"][arm] for arm in ("bug", "control", "mitigated"))
    assert checkpoint(bug, "started")["facts"]["sdk_termination_timeout"] == 2.0, "the SDK's own grace"
    assert checkpoint(bug, "started")["facts"]["launch"] == "fork_shim", "the fast method forks the server warm"
    # bug: the tool still running when the SDK's SIGTERM came, no cleanup, no exit
    assert _logged(bug)[-2:] == ["tool_started", "SIGTERM"] and ended_by(bug["server"]["events"]) == "SIGTERM"
    # control: the async tool cancelled at stdin EOF, cleanup, exit by itself, no signal
    assert _logged(control)[-3:] == ["tool_cancelled", "lifespan_cleanup", "exit"]
    # mitigated: the tool finishes inside the host's grace, then cleanup and exit, no signal
    assert _logged(mitigated)[-3:] == ["tool_finished", "lifespan_cleanup", "exit"]
    assert checkpoint(mitigated, "returned")["facts"]["termination_timeout_in_effect"] == mitigated["grace_s"]
    assert l11_run["mitigation"]["held"] is True, l11_run["mitigation"]["note"]
    for record in (bug, control, mitigated):
        assert not record["server"]["alive_after_host"] and record["reaped_after_arm"] == []
        assert "first_attempt" not in record, "the stock SDK's arms run once, at TOOL_S"


@pytest.mark.slow(35)
def test_pinned_reproduces_with_the_window_method(pinned):
    run = _run(pinned, WINDOW)
    assert run["verdict"] == "reproduced", run["reason"]
    assert run["arms"]["bug"]["tool_s"] == WINDOW.window
    assert checkpoint(run["arms"]["bug"], "started")["facts"]["launch"] == "exec", "the reference execs the server"


@pytest.mark.slow(30)
@pytest.mark.parametrize("options", [Options(), WINDOW], ids=["fast", "window"])
@pytest.mark.parametrize("fix", FIXES)
def test_each_fix_is_not_reproduced(fix, options, fixed):
    run = _run(fixed(fix), options)
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["mitigation"]["held"] is True, run["mitigation"]["note"]
    assert "lifespan_cleanup" in _logged(run["arms"]["bug"])
    # the client's 30 s grace lets the fast method's 2.5 s tool finish first: no trigger, so it ran for the window;
    # the abandoned thread's cleanup comes before the tool ends: a trigger, no second run
    retried = fix == "L11" and options.method == "fast"
    assert ("first_attempt" in run["arms"]["bug"]) == retried, run["arms"]["bug"].get("first_attempt")


def test_sdk_without_server_api_is_not_applicable(broken):
    run = _run(broken("without-server-api"), Options())
    assert run["verdict"] == "not_applicable", run["reason"]
    assert "neither" in run["reason"]


def test_termination_grace_raises_the_sdk_setting_for_the_block_only(monkeypatch):
    default = stdio.PROCESS_TERMINATION_TIMEOUT
    with termination_grace(default + 5):
        assert stdio.PROCESS_TERMINATION_TIMEOUT == default + 5
        with termination_grace(0.1):  # never lowers it
            assert stdio.PROCESS_TERMINATION_TIMEOUT == default + 5
    assert stdio.PROCESS_TERMINATION_TIMEOUT == default
    monkeypatch.delattr(stdio, "PROCESS_TERMINATION_TIMEOUT")
    with pytest.raises(LookupError), termination_grace(5):
        pass


def test_a_tool_ending_within_the_grace_is_no_evidence(l11_run):
    """An arm whose tool had less than the SDK's grace left when the host left did not test the defect."""
    bug = l11_run["arms"]["bug"]
    finding = assess({**bug, "tool_s": 1.5})
    assert finding.shown is None and "no trigger" in finding.note

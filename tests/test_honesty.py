"""Each case against a copy of the pinned SDK with that one defect fixed: the probe must see the fix.

That the unpatched SDK reproduces every case is shown by the full CLI run in test_cli.py.
"""

from __future__ import annotations

import pytest

from stdio_probe.cases import CASES
from stdio_probe.model import Options
from stdio_probe.runner import run_matrix


def _run(sdk, case_id: str, options: Options) -> dict:
    [run] = run_matrix([sdk], [case_id], options, lambda *event: None)
    return run


@pytest.mark.parametrize("case_id", list(CASES))
def test_fixed_sdk_is_not_reproduced(case_id, fixed):
    run = _run(fixed(case_id), case_id, Options())
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["mitigation"]["held"] is True, run["mitigation"]["note"]  # the contract is harmless on a fix


@pytest.mark.parametrize("method", ["fast", "window"])
def test_bounded_flush_is_waited_for_not_proven_hung(method, fixed):
    """A server that gives up on unsent output exits by itself after EOF: no proof may be claimed."""
    run = _run(fixed("L1"), "L1", Options(method=method))
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["arms"]["bug"]["decided_by"] == "exit"
    assert run["arms"]["bug"]["ended_by"] == "self"


def test_pinned_hang_is_decided_by_kernel_proof(pinned):
    run = _run(pinned, "L1", Options())
    bug = run["arms"]["bug"]
    assert run["verdict"] == "reproduced", run["reason"]
    assert bug["decided_by"] == "proof" and bug["proof"]["proven"]
    assert bug["exited_after_drain"], "draining the pipe should release the writer: the proof names the cause"


def test_sdk_without_listen_is_not_applicable_for_l6(broken):
    run = _run(broken("without-listen"), "L6", Options())
    assert run["verdict"] == "not_applicable", run["reason"]
    assert all(arm.get("not_applicable") for arm in run["arms"].values())

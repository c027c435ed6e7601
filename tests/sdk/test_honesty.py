"""Each case against a copy of the pinned SDK with that one defect fixed: the probe must see the fix.

That the unpatched SDK reproduces every case is shown by the session's one full CLI run (conftest.py:
pinned_run), read by test_cli.py; that its L1 is decided by the kernel proof, by test_proof.py. L11's fix runs
with both methods in test_l11.py (OWN_TEST), which also reads what its arms logged: its fast run here would be the
same run twice, its window run the same with a 10 s window where test_l11's is 5 s (the bug arm's tool lasts the
window, so the shorter one shows the same).
"""

from __future__ import annotations

import pytest

from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.sdk.cases import CASES
from tests.sdk_fixes import L5_REPLACE_DEFAULT, patched_sdk

OWN_TEST = {"L11"}  # cases whose first fix another module runs with both methods


def _run(sdk, case_id: str, options: Options) -> dict:
    [run] = run_matrix([sdk], [case_id], options)
    return run


@pytest.mark.parametrize("method", ["fast", "window"])
@pytest.mark.parametrize("case_id", [case_id for case_id in CASES if case_id not in OWN_TEST])
def test_fixed_sdk_is_not_reproduced(case_id, method, fixed):
    """Both methods must agree on every fix. L1's fix is a bounded flush: a server that gives up on unsent output
    exits by itself after EOF, so it must be waited for, never proven hung."""
    run = _run(fixed(case_id), case_id, Options(method=method))
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["mitigation"]["held"] is True, run["mitigation"]["note"]  # the contract is harmless on a fix
    for name, pair in run.get("pairs", {}).items():  # the server-API pair sees the fix too
        assert pair["verdict"] == "not_reproduced", (name, pair["reason"])
    if case_id == "L1":
        assert run["pairs"]["server API"]["verdict"] == "not_reproduced", run["pairs"]
        for arm in ("bug", "bug_server_api"):
            assert run["arms"][arm]["decided_by"] == "exit", (arm, run["arms"][arm]["decided_by"])
            assert run["arms"][arm]["ended_by"] == "self", (arm, run["arms"][arm]["ended_by"])


@pytest.mark.parametrize("method", ["fast", "window"])
def test_l5_fixed_by_its_default_alone_is_not_reproduced(pinned, tmp_path_factory, method):
    """A client whose encoding_error_handler defaults to "replace": the bug arm, on the SDK's defaults, sees it."""
    sdk = patched_sdk(tmp_path_factory.mktemp("sdk"), "l5-replace-default", L5_REPLACE_DEFAULT, pinned)
    run = _run(sdk, "L5", Options(method=method))
    assert run["verdict"] == "not_reproduced", run["reason"]
    config = run["arms"]["bug"]["sdk_config"]["StdioServerParameters"]
    assert "encoding_error_handler" not in config["explicit"]
    assert config["defaults"]["encoding_error_handler"] == "'replace'"


def test_sdk_without_listen_is_not_applicable_for_l6(broken):
    run = _run(broken("without-listen"), "L6", Options())
    assert run["verdict"] == "not_applicable", run["reason"]
    assert all(arm.get("not_applicable") for arm in run["arms"].values())


def test_sdk_without_server_api_runs_the_transport_pair_alone(broken):
    for run in run_matrix([broken("without-server-api")], ["L1", "L2"], Options()):
        assert run["verdict"] == "reproduced", run["reason"]
        pair = run["pairs"]["server API"]
        assert pair["verdict"] == "not_applicable" and "neither" in pair["reason"], pair

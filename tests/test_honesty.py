"""Each case, against the real pinned SDK and against a copy with that defect fixed."""

from __future__ import annotations

import pytest

from stdio_probe.cases import CASES
from stdio_probe.model import Options
from stdio_probe.runner import run_matrix

FAST = Options(window=10.0, method="fast")


def _runs(sdks, case_ids, options=FAST):
    return run_matrix(sdks, case_ids, options, lambda *event: None)


def test_pinned_sdk_reproduces_every_case(pinned):
    runs = _runs([pinned], list(CASES))
    assert {run["case"]: run["verdict"] for run in runs} == dict.fromkeys(CASES, "reproduced"), [
        run["reason"] for run in runs
    ]


@pytest.mark.parametrize("case_id", list(CASES))
def test_fixed_sdk_is_not_reproduced(case_id, fixed):
    [run] = _runs([fixed(case_id)], [case_id])
    assert run["verdict"] == "not_reproduced", run["reason"]

"""The verdict rule, in one place: a case's findings per arm -> verdict and reason.

The verdict comes from the bug and control arms only; whether the host
contract held is a separate judgement on the mitigated arm.
"""

from __future__ import annotations

from types import ModuleType

VERDICTS = ("reproduced", "not_reproduced", "inconclusive", "error", "not_applicable")


def decide(case: ModuleType, arms: dict[str, dict]) -> dict:
    """reproduced needs the bug arm to show the defect and the control arm not to."""
    for name in ("bug", "control"):
        record = arms[name]
        if record.get("error"):
            return {"verdict": "error", "reason": f"{name} arm: {record['error']}"}
    bug, control = case.assess(arms["bug"]), case.assess(arms["control"])
    seen = f"bug: {bug.note}; control: {control.note}"
    if bug.shown is None or control.shown is None:
        return {"verdict": "inconclusive", "reason": f"no evidence ({seen})"}
    if control.shown:
        return {"verdict": "inconclusive", "reason": f"control arm shows the defect too ({seen})"}
    return {"verdict": "reproduced" if bug.shown else "not_reproduced", "reason": seen}


def mitigation(case: ModuleType, record: dict) -> dict:
    """Whether the host contract held on the mitigated arm: held when the defect is not shown there."""
    if record.get("error"):
        return {"held": None, "note": f"mitigated arm: {record['error']}"}
    finding = case.assess(record)
    return {"held": None if finding.shown is None else not finding.shown, "note": finding.note}

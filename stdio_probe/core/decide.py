"""The verdict rule, in one place: a case's findings per arm -> verdict and reason.

The verdict comes from the bug and control arms only; whether the host
contract held is a separate judgement on the mitigated arm. A case may run the
same pair a second way (Probe.pairs, e.g. L1 and L2 through the SDK's high-level
server API): each such pair gets its own verdict by the same rule, recorded in
the run's "pairs" and named in the reason, and never changes the case's verdict.
"""

from __future__ import annotations

from stdio_probe.core.model import Probe, shorten
from stdio_probe.core.outcome import Contract, Outcome
from stdio_probe.report.record import ArmRecord, Mitigation
from stdio_probe.sdk.cases import ARMS

RULE_ARMS = ("bug", "control")


def decide(case: Probe, arms: dict[str, ArmRecord]) -> dict:
    """reproduced needs the bug arm to show the defect and the control arm not to.

    An arm of ARMS whose record says not_applicable (the SDK lacks what the case
    probes) makes the case not_applicable. Arms beyond bug, control and mitigated
    add what they showed to the reason and never change the verdict. The headline
    is the decisive evidence in a few words: the bug arm's, or what made the case
    undecided.
    """
    for name in ARMS:
        if arms.get(name, {}).get(Contract.NOT_APPLICABLE):
            return _verdict(Outcome.NOT_APPLICABLE, f"{name} arm: {arms[name]['not_applicable']}")
    decided = _rule(case, arms, *RULE_ARMS)
    paired = {arm for pair in case.pairs.values() for arm in pair}
    extras = {name: record for name, record in arms.items() if name not in ARMS and name not in paired}
    decided["reason"] += "".join(f"; {name}: {case.note(record)}" for name, record in extras.items())
    pairs = {name: _rule(case, arms, *pair) for name, pair in case.pairs.items()}
    decided["reason"] += "".join(f"; {name}: {p['verdict']} ({p['reason']})" for name, p in pairs.items())
    return {**decided, "pairs": pairs} if pairs else decided


def _rule(case: Probe, arms: dict[str, ArmRecord], bug_arm: str, control_arm: str) -> dict:
    """The verdict of one bug/control pair of arms."""
    for name in (bug_arm, control_arm):
        record = arms[name]
        if record.get(Contract.NOT_APPLICABLE):
            return _verdict(Outcome.NOT_APPLICABLE, f"{name} arm: {record['not_applicable']}")
        if record.get("error"):
            return _verdict(Outcome.ERROR, f"{name} arm: {record['error']}")
    bug, control = case.assess(arms[bug_arm]), case.assess(arms[control_arm])
    seen = f"bug: {bug.note}; control: {control.note}"
    if bug.shown is None or control.shown is None:
        silent = bug if bug.shown is None else control
        return _verdict(Outcome.INCONCLUSIVE, f"no evidence ({seen})", f"no evidence: {silent.brief}")
    if control.shown:
        too = f"control arm shows the defect too ({seen})"
        return _verdict(Outcome.INCONCLUSIVE, too, f"control too: {control.brief}")
    return _verdict(Outcome.REPRODUCED if bug.shown else Outcome.NOT_REPRODUCED, seen, bug.brief)


def _verdict(verdict: Outcome, reason: str, headline: str = "") -> dict:
    return {"verdict": verdict, "reason": reason, "headline": shorten(headline or reason)}


def mitigation(case: Probe, arms: dict[str, ArmRecord]) -> Mitigation:
    """Whether the host contract held on the mitigated arm: held when the defect is not shown there.

    status says it in one word: held, not_held, not_applicable (the case or the mitigated arm does not
    apply to this SDK; the note says why), or not_evaluated (the case applies, but the mitigated arm
    failed or showed nothing). not_evaluated is a failure of the host contract's check, reported
    beside the verdict wherever verdicts are, never hidden in it.
    """
    record = arms["mitigated"]
    for name in ARMS:
        if arms.get(name, {}).get(Contract.NOT_APPLICABLE):
            return _held(None, f"{name} arm: {arms[name]['not_applicable']}", Contract.NOT_APPLICABLE)
    if record.get("contract_not_applicable"):  # the SDK lacks what the rule needs; the case itself applies
        return _held(None, f"mitigated arm: {record['contract_not_applicable']}", Contract.NOT_APPLICABLE)
    if record.get("error"):
        return _held(None, f"mitigated arm: {record['error']}", Contract.NOT_EVALUATED)
    finding = case.assess(record)
    if finding.shown is None:
        return _held(None, finding.note, Contract.NOT_EVALUATED)
    return _held(not finding.shown, finding.note, Contract.NOT_HELD if finding.shown else Contract.HELD)


def _held(held: bool | None, note: str, status: Contract) -> Mitigation:
    return {"held": held, "note": note, "status": status}


def unready(reason: str) -> tuple[dict, Mitigation]:
    """A case on an SDK that could not be made ready: error for that reason, its host contract not evaluated."""
    return _verdict(Outcome.ERROR, reason), _held(None, reason, Contract.NOT_EVALUATED)


NO_CONTRACT = _held(None, "server checks have no host-contract arm", Contract.NOT_APPLICABLE)
NO_HOST_ARM = _held(
    None, "host checks judge the host itself: the host contract is what they check", Contract.NOT_APPLICABLE
)


def decide_check(check: Probe, arms: dict[str, ArmRecord]) -> dict:
    """A server check's verdict: by the bug/control rule where it has a control arm.

    Otherwise each arm is a trigger of its own: reproduced when any shows the defect, not_reproduced
    when all ran and none does; an arm without evidence (and no other showing it) is inconclusive.
    """
    if "control" in arms:
        return decide(check, arms)
    order = {name: n for n, name in enumerate(check.arms)}  # the check's own order, however a file stored them
    arms = dict(sorted(arms.items(), key=lambda item: order.get(item[0], len(order))))
    for name, record in arms.items():
        if record.get(Contract.NOT_APPLICABLE):
            return _verdict(Outcome.NOT_APPLICABLE, f"{name}: {record['not_applicable']}")
        if record.get("error"):
            return _verdict(Outcome.ERROR, f"{name}: {record['error']}")
    findings = {name: check.assess(record) for name, record in arms.items()}
    seen = "; ".join(f"{name}: {f.note}" for name, f in findings.items()) if len(arms) > 1 else findings["bug"].note
    for name, finding in findings.items():
        if finding.shown:
            return _verdict(Outcome.REPRODUCED, seen, (f"{name}: " if len(arms) > 1 else "") + finding.brief)
    for finding in findings.values():
        if finding.shown is None:
            return _verdict(Outcome.INCONCLUSIVE, f"no evidence ({seen})", f"no evidence: {finding.brief}")
    return _verdict(Outcome.NOT_REPRODUCED, seen, next(iter(findings.values())).brief)

"""What a test that fails on a verdict prints: the readings of every proof that decided one of the run's arms.

A proof the kernel gave (hang.py) is the one verdict a later look cannot check: the process is ended at once.
Its record keeps what each thread waited on and the row of the wake-source table that ruled out each source
(hang.readings); a failure message that carries them says what the proof saw, even when it never repeats.

A test that expects a verdict of each of many checks prints those of the checks that differ only (differing), as
text: pytest cuts a message that is not a string to a few hundred characters, so a message of every check's
reason lost the one that differed.
"""

from __future__ import annotations

import json

NOT_FACTS = ("pid", "command", "started_at")  # an arm's values that tell nothing of its verdict
TAIL = 600  # characters kept of a longer text (stderr): its end, where a crash trace ends


def proof_readings(run: dict) -> str:
    """The run's reason and, for each arm, the readings of the proofs that decided it (its record's own, a
    stuck driver's or host's, an L12 step's), as one line each; "no proof decided an arm" when none did."""
    lines = [run.get("reason", "")]
    for arm, record in run.get("arms", {}).items():
        lines += [f"{arm} {where}: {json.dumps(readings)}" for where, readings in _decided(record, "")]
    return "\n".join(lines if len(lines) > 1 else [*lines, "no proof decided an arm"])


def _decided(node: object, where: str) -> list[tuple[str, dict]]:
    """(path in the record, readings) of each proof in node that decided (decided_by "proof")."""
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in _decided(item, f"{where}[{i}]")]
    if not isinstance(node, dict):
        return []
    found = []
    if node.get("decided_by") == "proof" and isinstance(node.get("proof"), dict):
        found.append((where or "record", node["proof"].get("readings", "no readings kept")))
    return found + [item for key, value in node.items() if key != "proof" for item in _decided(value, f"{where}.{key}")]


def differing(runs: dict[str, dict], expected: dict[str, str]) -> str:
    """For each check whose verdict is not the one expected (runs by check), the two verdicts, its whole reason,
    each arm's facts (arm_facts) and the proofs that decided its arms (proof_readings); nothing of the others."""
    lines = []
    for case, verdict in expected.items():
        run = runs[case]
        if run["verdict"] != verdict:
            lines.append(f"{case}: expected {verdict}, got {run['verdict']}")
            lines += [f"  {line}" for line in proof_readings(run).splitlines()]
            lines += [f"  {arm}: {json.dumps(arm_facts(record))}" for arm, record in run.get("arms", {}).items()]
    return "\n".join(lines)


def arm_facts(record: dict) -> dict:
    """An arm record's single values (how and when the server ended, what the arm saw, its stderr's last TAIL
    characters) and its trials, without NOT_FACTS."""
    facts = {key: value for key, value in record.items() if key not in NOT_FACTS and not isinstance(value, dict | list)}
    facts |= {key: record[key] for key in ("trials",) if key in record}
    return {key: value[-TAIL:] if isinstance(value, str) else value for key, value in facts.items()}

"""What a test that fails on a verdict prints: the readings of every proof that decided one of the run's arms.

A proof the kernel gave (hang.py) is the one verdict a later look cannot check: the process is ended at once.
Its record keeps what each thread waited on and the row of the wake-source table that ruled out each source
(hang.readings); a failure message that carries them says what the proof saw, even when it never repeats.
"""

from __future__ import annotations

import json


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

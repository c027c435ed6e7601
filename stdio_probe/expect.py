"""Expected verdicts: load an expectations file and list what a run contradicts or never checked.

The file maps a case to a verdict for every SDK, or to verdicts per mcp version:

    {"L1": "reproduced", "L3": {"2.2.0": "reproduced", "2.3.0": "not_reproduced"}}

An entry that no run of this invocation checked is stale (a baseline that no
longer refers to anything), and is reported like a mismatch.
"""

from __future__ import annotations

import json
from pathlib import Path

from stdio_probe.decide import VERDICTS


class ExpectationError(Exception):
    """The expectations file cannot be used: one line for the user."""


def load(path: Path) -> dict[tuple[str, str | None], str]:
    """(case, mcp version or None for every version) -> expected verdict."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ExpectationError(f"--expect {path}: {exc}") from None
    if not isinstance(document, dict):
        raise ExpectationError(f"--expect {path}: expected an object of case -> verdict")
    entries: dict[tuple[str, str | None], str] = {}
    for case, expected in document.items():
        per_version = expected if isinstance(expected, dict) else {None: expected}
        for version, verdict in per_version.items():
            if verdict not in VERDICTS:
                raise ExpectationError(f"--expect {path}: {case}: {verdict!r} is not a verdict ({', '.join(VERDICTS)})")
            entries[(case, version)] = verdict
    return entries


def problems(expected: dict[tuple[str, str | None], str], runs: list[dict]) -> list[str]:
    """Every mismatch and every stale entry, one line each; empty when the run meets the expectations."""
    found, checked = [], set()
    for run in runs:
        version = run["sdk"].get("version")
        for key in ((run["case"], version), (run["case"], None)):
            if key in expected:
                checked.add(key)
                if run["verdict"] != expected[key]:
                    found.append(
                        f"{run['case']} on {run['sdk']['spec']} (mcp {version}): expected {expected[key]}, "
                        f"got {run['verdict']} ({run['reason']})"
                    )
    for case, version in sorted(expected.keys() - checked, key=lambda key: (key[0], key[1] or "")):
        where = f"mcp {version}" if version else "any SDK"
        found.append(f"{case} on {where}: expected {expected[(case, version)]}, but nothing in this run checked it")
    return found

"""Expected verdicts: load an expectations file and list what a run contradicts or never checked.

The file maps a case to a verdict for every SDK, or to verdicts per mcp version:

    {"L1": "reproduced", "L3": {"2.2.0": "reproduced", "2.3.0": "not_reproduced"}}

An entry for a case this invocation ran that no run checked (an mcp version
not among its SDKs) is stale, and is reported like a mismatch; entries for
cases left out by --only are out of scope. A case the probe does not know is
an error in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from stdio_probe.cases import CASES
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
        if case not in CASES:
            raise ExpectationError(f"--expect {path}: {case!r} is not a case ({', '.join(CASES)})")
        per_version = expected if isinstance(expected, dict) else {None: expected}
        for version, verdict in per_version.items():
            if verdict not in VERDICTS:
                raise ExpectationError(f"--expect {path}: {case}: {verdict!r} is not a verdict ({', '.join(VERDICTS)})")
            entries[(case, version)] = verdict
    return entries


def problems(expected: dict[tuple[str, str | None], str], runs: list[dict], case_ids: list[str]) -> list[str]:
    """Every mismatch and every stale entry of the cases run, one line each; empty when the run meets them."""
    expected = {key: verdict for key, verdict in expected.items() if key[0] in case_ids}
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

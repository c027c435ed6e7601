"""A results file of many releases as the README's release table (Markdown).

Rows are ranges of consecutive releases (in version order) whose verdicts on every case are the
same; columns are the cases. After the table, per case, the first release where its verdict
changes. Only runs against an SDK with a version are read (server checks and unversioned trees
are left out). Usage: python -m stdio_probe.release_table results/releases.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

SHORT = {"reproduced": "R", "not_reproduced": "–", "not_applicable": "n/a"}
LEGEND = (
    "R = reproduced, – = not reproduced, n/a = not applicable (the reason is in the results file); "
    "other verdicts spelled out."
)


def verdicts(document: dict) -> dict[str, dict[str, str]]:
    """Version -> case -> verdict, from every run with an SDK version."""
    found: dict[str, dict[str, str]] = {}
    for run in document.get("runs", []):
        sdk = run.get("sdk") or {}
        version = sdk.get("version") or (sdk.get("spec") if sdk.get("source") == "pypi" else None)
        if version and str(run.get("case", "")).startswith("L"):
            found.setdefault(version, {})[run["case"]] = run["verdict"]
    return found


def _version_key(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def _case_key(case: str) -> tuple[int, str]:
    return (int(case[1:]) if case[1:].isdigit() else 10**6, case)


def table(document: dict) -> str:
    """The Markdown table, its legend, and the per-case changes."""
    found = verdicts(document)
    versions = sorted(found, key=_version_key)
    cases = sorted({case for row in found.values() for case in row}, key=_case_key)
    if not versions:
        return "no runs with an SDK version in this results file\n"
    ranges: list[tuple[str, str, tuple[str, ...]]] = []
    for version in versions:
        row = tuple(found[version].get(case, "") for case in cases)
        if ranges and ranges[-1][2] == row:
            ranges[-1] = (ranges[-1][0], version, row)
        else:
            ranges.append((version, version, row))
    lines = ["| releases | " + " | ".join(cases) + " |", "|---|" + "---|" * len(cases)]
    for first, last, row in ranges:
        span = first if first == last else f"{first} – {last}"
        lines.append(f"| {span} | " + " | ".join(SHORT.get(v, v.replace("_", " ")) if v else " " for v in row) + " |")
    lines += ["", LEGEND, "", *changes(found, versions, cases)]
    return "\n".join(lines) + "\n"


def changes(found: dict[str, dict[str, str]], versions: list[str], cases: list[str]) -> list[str]:
    """Per case, the first release where its verdict differs from the release before it."""
    lines = []
    for case in cases:
        seen = [(v, found[v][case]) for v in versions if case in found[v]]
        pairs = zip(seen, seen[1:], strict=False)
        steps = [f"{v} ({before} → {now})" for (_, before), (v, now) in pairs if before != now]
        start = f"{seen[0][1]} from {seen[0][0]}" if seen else "no runs"
        lines.append(f"- {case}: {start}; " + (f"changes at {', '.join(steps)}" if steps else "no change"))
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m stdio_probe.release_table RESULTS.json", file=sys.stderr)
        return 2
    try:
        document = json.loads(Path(args[0]).read_text())
    except (OSError, ValueError) as exc:
        print(f"cannot read {args[0]}: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(table(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The README's release table: a results file of many releases as ranges of releases × cases.

    python -m stdio_probe.report.release_table results/releases.json

Prints Markdown: a table whose rows are runs of consecutive releases (in
version order) with the same verdict on every case, and, per case, each
release at which its verdict changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packaging.version import Version

from stdio_probe.core.outcome import Outcome
from stdio_probe.report import record

SHORT = {Outcome.REPRODUCED: "R", Outcome.NOT_REPRODUCED: "–", Outcome.NOT_APPLICABLE: "n/a"}
LEGEND = "R reproduced · – not reproduced · n/a not applicable (the release lacks what the case probes)"


def release(run: dict) -> str | None:
    """The mcp release a run was made on; None for one not made on a release from the index (a path), or whose
    SDK was never installed (no version read)."""
    sdk = run.get("sdk") or {}
    return sdk.get("version") if sdk.get("source") == "pypi" else None


def verdicts_by_release(document: dict) -> tuple[list[str], dict[str, dict[str, str]]]:
    """(the cases in the order the file has them, {release: {case: verdict}}) for the runs of released SDKs."""
    cases: list[str] = []
    releases: dict[str, dict[str, str]] = {}
    for run in document["runs"]:
        if (version := release(run)) is None:
            continue
        if run["case"] not in cases:
            cases.append(run["case"])
        releases.setdefault(version, {})[run["case"]] = run["verdict"]
    return cases, dict(sorted(releases.items(), key=lambda item: Version(item[0])))


def ranges(releases: dict[str, dict[str, str]], cases: list[str]) -> list[tuple[str, str, int, list[str]]]:
    """(first, last, how many releases, the verdicts) for each run of consecutive releases that agree."""
    rows: list[tuple[str, str, int, list[str]]] = []
    for version, verdicts in releases.items():
        row = [verdicts.get(case, "") for case in cases]
        if rows and rows[-1][3] == row:
            first, _, count, _ = rows[-1]
            rows[-1] = (first, version, count + 1, row)
        else:
            rows.append((version, version, 1, row))
    return rows


def changes(releases: dict[str, dict[str, str]], cases: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """{case: [(release, verdict before, verdict from then on)]}, in version order."""
    found: dict[str, list[tuple[str, str, str]]] = {case: [] for case in cases}
    before: dict[str, str] = {}
    for version, verdicts in releases.items():
        for case in cases:
            now = verdicts.get(case, "")
            if case in before and before[case] != now:
                found[case].append((version, before[case], now))
            before[case] = now
    return found


def markdown(document: dict) -> str:
    cases, releases = verdicts_by_release(document)
    lines = ["| releases | " + " | ".join(cases) + " |", "|---|" + "---|" * len(cases)]
    for first, last, count, row in ranges(releases, cases):
        span = first if count == 1 else f"{first} – {last} ({count})"
        lines.append(f"| {span} | " + " | ".join(SHORT.get(v, v or "·") for v in row) + " |")
    lines += ["", LEGEND, "", "First release at which each case's verdict changes:", ""]
    for case, found in changes(releases, cases).items():
        steps = "; ".join(f"{SHORT.get(a, a)} → {SHORT.get(b, b)} at {version}" for version, a, b in found)
        lines.append(f"- {case}: {steps or 'the same on every release'}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results file of a sweep (--sdk all)")
    args = parser.parse_args(argv)
    try:
        document = record.read(args.results)
    except record.ResultsError as exc:
        print(f"release_table: cannot read {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(markdown(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())

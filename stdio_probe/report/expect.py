"""Expected verdicts: load an expectations file, list what a run contradicts or never checked, write one.

The file maps a case to a verdict for every SDK, or to verdicts per mcp version
(or per subject: an SDK spec as given, a server's or host's label):

    {"L1": "reproduced", "L3": {"2.2.0": "reproduced", "2.3.0": "not_reproduced"}}
    {"S1": "not_reproduced", "S2": {"mcp-server-git": "reproduced", "time": "not_applicable"}}

A run whose verdict differs from its entry is a mismatch, unless it did not
decide (error, inconclusive): that is its own kind of problem, and so is an
undecided run with no entry at all. An entry for a case this invocation ran
that no run checked (an mcp version not among its SDKs) is stale, and is
reported like a mismatch; entries for cases left out by --only are out of
scope. A case the probe does not know is an error in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stdio_probe.core.outcome import MEANING, Outcome, Unmet
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report.record import read_json, subject
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS


class ExpectationError(Exception):
    """The expectations file cannot be used: one line for the user."""


def load(path: Path) -> dict[tuple[str, str | None], str]:
    """(case, mcp version or None for every version) -> expected verdict, from an expectations file."""
    try:
        document = read_json(path)
    except (OSError, ValueError) as exc:
        raise ExpectationError(f"--expect {path}: {exc}") from None
    return parse(document, f"--expect {path}")


def parse(document: object, where: str) -> dict[tuple[str, str | None], str]:
    """The entries of an expectations document (the file's JSON, or the same mapping given in code)."""
    if not isinstance(document, dict):
        raise ExpectationError(f"{where}: expected an object of case -> verdict")
    entries: dict[tuple[str, str | None], str] = {}
    for case, expected in document.items():
        if case not in CASES and case not in CHECKS and case not in HOST_CHECKS:
            known = ", ".join([*CASES, *CHECKS, *HOST_CHECKS])
            raise ExpectationError(f"{where}: {case!r} is not a case, a server check or a host check ({known})")
        per_version = expected if isinstance(expected, dict) else {None: expected}
        for version, verdict in per_version.items():
            if not isinstance(verdict, str) or verdict not in MEANING:
                raise ExpectationError(f"{where}: {case}: {verdict!r} is not a verdict ({', '.join(Outcome)})")
            entries[(case, version)] = verdict
    return entries


@dataclass(frozen=True)
class Problem:
    """One thing the run contradicts (outcome.UNMET says what it means); run is None for a stale entry."""

    kind: Unmet
    line: str
    run: dict | None = None


def problems(expected: dict[tuple[str, str | None], str], runs: list[dict], case_ids: list[str]) -> list[Problem]:
    """Every mismatch, undecided run and stale entry of the cases run; empty when the run meets them."""
    expected = {key: verdict for key, verdict in expected.items() if key[0] in case_ids}
    found, checked = [], set()
    for run in runs:
        keys = [key for key in _keys(run) if key in expected]
        checked.update(keys)
        wanted = expected[keys[0]] if keys else None
        unmet = MEANING[run["verdict"]].unmet
        if run["verdict"] == wanted or (wanted is None and unmet is not Unmet.UNDECIDED):
            continue
        where = f"{run['case']} on {subject(run)}" + (f" (mcp {run['sdk']['version']})" if _version(run) else "")
        wants = f"expected {wanted}" if wanted else "no expectation"
        found.append(Problem(unmet, f"{where}: {wants}, got {run['verdict']} ({run['reason']})", run))
    for case, key in sorted(expected.keys() - checked, key=lambda key: (key[0], key[1] or "")):
        where = (f"mcp {key}" if _looks_like_version(key) else key) if key else "any SDK"
        line = f"{case} on {where}: expected {expected[(case, key)]}, but nothing in this run checked it"
        found.append(Problem(Unmet.STALE, line))
    return found


def _looks_like_version(key: str) -> bool:
    return key[:1].isdigit()


def _version(run: dict) -> str | None:
    return run.get("sdk", {}).get("version")


def _keys(run: dict) -> list[tuple[str, str | None]]:
    """The entries that can speak for a run, most specific first: its subject (pinned), its mcp version, any SDK."""
    names = dict.fromkeys(name for name in (subject(run), _version(run)) if name)
    return [*((run["case"], name) for name in names), (run["case"], None)]


def expectations(runs: list[dict]) -> dict[str, dict[str, str]]:
    """An expectations file of these runs' verdicts: case -> mcp version (or subject) -> verdict.

    Two runs of one mcp version (the pinned SDK and the same version from PyPI) share an entry
    when they agree; when they disagree, each is written under its subject.
    """
    by_name: dict[tuple[str, str], set[str]] = {}
    for run in runs:
        by_name.setdefault((run["case"], _version(run) or subject(run)), set()).add(run["verdict"])
    document: dict[str, dict[str, str]] = {}
    for run in runs:
        name = _version(run) or subject(run)
        if len(by_name[(run["case"], name)]) > 1:
            name = subject(run)
        document.setdefault(run["case"], {})[name] = run["verdict"]
    return document

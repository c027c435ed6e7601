"""The README's table of real hosts: every host check on each, from one run, with versions and eras.

    python -m tests.host_table [--window 10] [--out results/hosts.json] [--only LABEL,...]

The hosts are the recipes under examples/hosts/, installed pinned and cached by
tests/third_party_hosts.py (a venv per PyPI host, an npm prefix per npm host); a host that cannot
be installed here (no node) is left out with a line on stderr. All hosts run in one probe run, as
`--host` arguments would (the arms concurrently, the fast method). The era column is the protocol
era each host chose with the scenario server (runs[].host.era). Writes a results file and prints
the Markdown table.
"""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

from stdio_probe.core import runner, spawn
from stdio_probe.core.model import Host, Options
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report import record
from tests import tables, third_party_hosts
from tests.third_party import Unavailable

HERE = Path(__file__).parent
LEGEND = "R reproduced · – not reproduced · n/a not applicable (H9: the host does not reconnect) · ? inconclusive"


def installed(only: list[str] | None) -> list[third_party_hosts.Host]:
    """The pinned hosts (those labelled in only, if given), installed; one that cannot be is named on stderr."""
    ready = []
    for pin in third_party_hosts.HOSTS:
        if only and pin.label not in only:
            continue
        try:
            ready.append(third_party_hosts.host(pin))
        except Unavailable as exc:
            print(f"{pin.label}: left out: {exc}", file=sys.stderr)
    return ready


def run(window: float, only: list[str] | None, checks: list[str]) -> dict:
    """Every host check (of checks) on every installed host, in one run, as a results document."""
    started = datetime.datetime.now(datetime.UTC)
    options = Options(window, "fast")
    chosen = installed(only)
    hosts = [Host(h.name, h.command) for h in chosen]
    with spawn.Supervisor() as supervisor:  # its end counts what outlived the arms
        runs = runner.run_hosts(hosts, checks, options, lambda *a: None, supervisor)
        left = supervisor.end()
    described = {
        h.name: {
            "host": h.name.removesuffix(f"-{h.version}"),
            "package": h.package,
            "version": h.version,
            "requires": list(h.requires),
            "recipe": h.recipe,
        }
        for h in chosen
    }
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": left, "hosts": described}
    return record.results(meta, runs)


def markdown(document: dict) -> str:
    """The table: a row per host (package and version, what it runs on, the era it spoke), a column per check."""
    checks = list(dict.fromkeys(found["case"] for found in document["runs"]))
    verdicts: dict[str, dict[str, str]] = {}
    eras: dict[str, str] = {}
    for found in document["runs"]:
        label = found["host"]["label"]
        verdicts.setdefault(label, {})[found["case"]] = tables.SHORT[found["verdict"]]
        eras[label] = found["host"]["era"] or "none"
    lines = [
        "| host | package, version | runs on | era | " + " | ".join(checks) + " |",
        "|---|---|---|---|" + "---|" * len(checks),
    ]
    for label, row in verdicts.items():
        about = document["metadata"]["hosts"][label]
        runs_on = ", ".join(about["requires"]) or "-"
        cells = " | ".join(row.get(check, "") for check in checks)
        lines.append(
            f"| {about['host']} | `{about['package']}` {about['version']} | {runs_on} | {eras[label]} | {cells} |"
        )
    return "\n".join([*lines, "", LEGEND])


def main(argv: list[str] | None = None) -> int:
    return tables.main(
        argv, __doc__.splitlines()[0], HERE.parent / "results" / "hosts.json", run, markdown, list(HOST_CHECKS)
    )


if __name__ == "__main__":
    sys.exit(main())

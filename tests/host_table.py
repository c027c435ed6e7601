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
from stdio_probe.core.outcome import Outcome
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report import record
from tests import tables, third_party_hosts
from tests.third_party import Unavailable

R, N, NA = Outcome.REPRODUCED, Outcome.NOT_REPRODUCED, Outcome.NOT_APPLICABLE
CLEAN = {"H1": N, "H2": N, "H3": N, "H4": R, "H5": R, "H6": N, "H7": N, "H8": N, "H9": NA, "H10": R, "H11": R}

# H11 reproduced but on openai-agents (5 s): no other host bounds a call within the 10 s window by default: the TS
# SDK (and the Inspector on it) at 60 s, pydantic-ai at 5 min, the Python SDK (langchain's too) never
EXPECTED = {  # the README's table; H9 not_applicable everywhere: no host relaunches a crashed server
    "python-sdk-2.2.0": CLEAN | {"H6": R},  # H4, H5, H6: L9, L8, L5 seen from the host
    "python-sdk-2.3.0": CLEAN | {"H6": R},
    "typescript-sdk-1.32.2": CLEAN | {"H8": R},  # its 10 MiB read buffer: the 16 MiB call fails
    "inspector-cli-0.15.0": CLEAN | {"H7": R, "H8": R},  # H7: the unread stderr pipe (typescript-sdk #2776's shape)
    "openai-agents-0.24.0": CLEAN | {"H8": R, "H11": N},  # H11: its 5 s request timeout cancels the call
    "pydantic-ai-2.68.0": CLEAN | {"H6": R},
    "langchain-mcp-adapters-0.3.2": CLEAN,
}

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
        runs = runner.run_hosts(hosts, checks, options, supervisor=supervisor)
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

"""What the server checks cost: the CLI's wall time for every check on a server, median over rounds.

The stdlib fixture server, well behaved (every check not_reproduced) and writing its answers from
its reading thread (S2 reproduced, decided by the kernel proof), and its arms' median duration
(the probe's own cost per arm: the fixture starts in about 30 ms). With --real, two real servers
of tests/server_table.py (installed by tests/third_party.py): server-memory (Node) with its large
call, and mcp-server-time (Python SDK: each start imports the SDK). Issue 28's targets, on 2 cores:
server-memory at most 4 s, mcp-server-time at most 15 s, the probe's cost per arm under 0.15 s.

    .venv/bin/python bench/bench_server_checks.py --rounds 5 [--real]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

from common import ROOT, run_probe

FIXTURE = ROOT / "stdio_probe" / "fixtures" / "fixture_check_server.py"
REAL = ("server-memory", "mcp-server-time")


def servers(real: bool, work: Path) -> dict[str, list[str]]:
    """CLI arguments per server: --server, and --large-call where it has one."""
    found = {
        name: ["--server", shlex.join([sys.executable, str(FIXTURE), *flags]), "--large-call", "large {}"]
        for name, flags in (("well-behaved", []), ("blocking-writes", ["--blocking-writes"]))
    }
    if real:
        sys.path.insert(0, str(ROOT))
        from tests.server_table import entries

        for entry in entries(work):
            if entry.server.label in REAL:
                call = entry.server.large_call
                large = ["--large-call", f"{call[0]} {json.dumps(call[1])}"] if call else []
                found[entry.server.label] = ["--server", entry.server.command, *large]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--real", action="store_true", help="also server-memory and mcp-server-time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        plan = servers(args.real, Path(folder))
        times: dict[str, list[float]] = {name: [] for name in plan}
        arm_times: dict[str, list[float]] = {name: [] for name in plan}
        for round_ in range(1, args.rounds + 1):
            for name, server in plan.items():
                elapsed, results = run_probe(*server, "--name", name)
                verdicts = {run["case"]: run["verdict"][:5] for run in results["runs"]}
                times[name].append(elapsed)
                arm_times[name] += [arm["duration_s"] for run in results["runs"] for arm in run["arms"].values()]
                print(f"round {round_} {name:16} {elapsed:5.2f} s  {verdicts}")
    for name, values in times.items():
        arm = statistics.median(arm_times[name])
        print(f"{name:16} median {statistics.median(values):5.2f} s over {len(values)} runs; arm median {arm:.3f} s")


if __name__ == "__main__":
    main()

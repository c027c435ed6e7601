"""What the six server checks cost on one Python server: the CLI's wall time, median over rounds.

Two servers, alternated each round: the well-behaved stdlib fixture (every check not_reproduced;
S2's large answer read or not, it exits at EOF), and the same server writing its answers from
its reading thread (S2 reproduced, decided by the kernel proof, not the window). Issue 15's
target: at most 3 s for the six checks on a well-behaved server, on 2 cores.

    .venv/bin/python bench/bench_server_checks.py --rounds 5
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys

from common import ROOT, run_probe

FIXTURE = ROOT / "stdio_probe" / "fixtures" / "fixture_check_server.py"
SERVERS = {
    "well-behaved": [],
    "blocking-writes": ["--blocking-writes"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in SERVERS}
    for round_ in range(1, args.rounds + 1):
        for name, flags in SERVERS.items():
            command = shlex.join([sys.executable, str(FIXTURE), *flags])
            elapsed, results = run_probe("--server", command, "--name", name, "--large-call", "large {}")
            verdicts = {run["case"]: run["verdict"] for run in results["runs"]}
            times[name].append(elapsed)
            print(f"round {round_} {name:16} {elapsed:5.2f} s  {verdicts}")
    for name, values in times.items():
        print(f"{name:16} median {statistics.median(values):5.2f} s over {len(values)} runs")
    well, blocking = (statistics.median(times[name]) for name in SERVERS)
    print(f"blocking-writes / well-behaved: {blocking / well:.2f}x")


if __name__ == "__main__":
    main()

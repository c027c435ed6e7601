"""What the eleven host checks cost on a host on the Python SDK's client: the CLI's wall time, median over rounds.

The host is the recipe examples/hosts/python_sdk_client.py (stdio_client + ClientSession, the pinned
mcp) run by this interpreter; every round runs H1-H11, fast method, default window. Also printed: the
CPU seconds of the run (the probe, the hosts and the servers they reaped: on 2 cores the wall time
cannot be less than half of it), the load average before each round (the machine is shared) and the
slowest arm. Issue 27's target: at most 15 s on 2 cores, most of it the bounds the checks must wait
(H3: the SDK's 2 s grace, then 2 s more before its SIGKILL; H10: 1 s after the kill).

    .venv/bin/python bench/bench_host_checks.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import sys

from common import ROOT, run_probe

HOST = ROOT / "examples" / "hosts" / "python_sdk_client.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    command = shlex.join([sys.executable, str(HOST)]) + " {server}"
    times, cpus = [], []
    for round_ in range(1, args.rounds + 1):
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed, results = run_probe("--host", command, "--name", "mcp")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        times.append(elapsed)
        cpus.append(cpu)
        arms = [
            (arm["duration_s"], f"{run['case']}/{name}") for run in results["runs"] for name, arm in run["arms"].items()
        ]
        slowest = max(arms)
        verdicts = " ".join(f"{run['case']}:{run['verdict'][:5]}" for run in results["runs"])
        slow = f"slowest {slowest[1]} {slowest[0]:.1f} s"
        print(f"round {round_}: {elapsed:5.2f} s, CPU {cpu:.2f} s (load {load:.1f}; {slow})")
        print(f"  {verdicts}")
    spread = f"min {min(times):.2f}, max {max(times):.2f}"
    print(f"median {statistics.median(times):5.2f} s over {len(times)} rounds ({spread})")
    print(f"CPU (probe, hosts and the servers they reaped): median {statistics.median(cpus):.2f} s")


if __name__ == "__main__":
    main()

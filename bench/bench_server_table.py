"""Every check on every server of the README's table, in both methods: wall time per server, the median, and
the fast method's speed-up, with the server's starts (issue 42's targets: each server at most 15 s and the median
at most 8 s in the fast method, the fast method at least 3x the window method on every server not on Node).

The servers are tests/server_table.py's, installed and cached by tests/third_party.py. Each server is run alone
(one server at a time, in this process, as the table is made), the methods in turns within a round, so that both
meet the same machine. Starts are counted at the supervisor's spawn of a server command (the era probe, every arm,
every trial, every rerun alone).

    .venv/bin/python bench/bench_server_table.py [--rounds 1] [--methods fast,window] [--only LABEL,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT

sys.path.insert(0, str(ROOT))

from stdio_probe.core import runner, spawn  # noqa: E402
from stdio_probe.core.model import Options, Server  # noqa: E402
from stdio_probe.server.checks import CHECKS  # noqa: E402
from tests.server_table import entries  # noqa: E402

STARTS = {"n": 0}
_LOCK = threading.Lock()
_SPAWN = spawn.Supervisor.spawn_command


def _counted(self: spawn.Supervisor, *args: object, **kwargs: object) -> tuple:
    with _LOCK:
        STARTS["n"] += 1
    return _SPAWN(self, *args, **kwargs)


def timed(server: Server, method: str, window: float) -> tuple[float, float, int, dict[str, str]]:
    """Wall and CPU seconds (this process and its reaped children) of every check on server, its starts, verdicts."""
    before, cpu_before, started = STARTS["n"], os.times(), time.perf_counter()
    runs = runner.run_servers([server], list(CHECKS), Options(window, method))
    wall, cpu_after = time.perf_counter() - started, os.times()
    cpu = sum(cpu_after[:4]) - sum(cpu_before[:4])
    return wall, cpu, STARTS["n"] - before, {run["case"]: run["verdict"] for run in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--methods", default="fast,window")
    parser.add_argument("--only", help="labels of the table's servers, comma-separated")
    parser.add_argument("--window", type=float, default=10.0)
    args = parser.parse_args()
    methods = args.methods.split(",")
    spawn.Supervisor.spawn_command = _counted
    walls: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        table = [e for e in entries(Path(folder)) if not args.only or e.server.label in args.only.split(",")]
        for round_ in range(1, args.rounds + 1):
            for entry in table:
                label, verdicts = entry.server.label, {}
                for method in methods:
                    wall, cpu, starts, verdicts[method] = timed(entry.server, method, args.window)
                    walls.setdefault((label, method), []).append(wall)
                    load = os.getloadavg()[0]
                    print(f"round {round_} {label:28} {method:6} {wall:6.1f} s  CPU {cpu:5.1f} s  {starts:3d} starts  "
                          f"load {load:.1f}", flush=True)
                if len(methods) > 1 and verdicts[methods[0]] != verdicts[methods[1]]:
                    differ = {c: (verdicts[methods[0]][c], verdicts[methods[1]][c]) for c in verdicts[methods[0]]}
                    print(f"  verdicts differ: { {c: v for c, v in differ.items() if v[0] != v[1]} }", flush=True)
    print()
    for method in methods:
        medians = [statistics.median(walls[(e.server.label, method)]) for e in table]
        print(f"{method}: median over servers {statistics.median(medians):.1f} s, slowest {max(medians):.1f} s")
    if len(methods) > 1:
        for entry in table:
            fast, window = (statistics.median(walls[(entry.server.label, m)]) for m in methods[:2])
            print(f"{entry.server.label:28} {entry.language:10} {methods[0]} {fast:6.1f} s  {methods[1]} "
                  f"{window:6.1f} s  ratio {window / fast:4.1f}")


if __name__ == "__main__":
    main()

"""Every check on every subject of one of the README's tables, in both methods: wall time per subject, the median,
and the fast method's speed-up, with the starts (issue 42's targets: each server at most 15 s and the median at most
8 s in the fast method, the fast method at least 3x the window method on every server not on Node; each host at
most 12 s).

The servers are tests/server_table.py's, installed and cached by tests/third_party.py; the hosts are
tests/host_table.py's recipes, installed and cached by tests/third_party_hosts.py. Each subject is run alone (one
at a time, in this process, as the tables are made), the methods in turns within a round, so that both meet the
same machine. Starts are counted at the supervisor's spawn of a command: for a server, the era probe, every arm,
every trial, every rerun alone; for a host, every arm's host (the servers a host starts are its own).

    .venv/bin/python bench/bench_tables.py [--table servers|hosts] [--rounds 1] [--methods fast,window]
        [--only LABEL,...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from common import ROOT

sys.path.insert(0, str(ROOT))

from stdio_probe.core import runner, spawn  # noqa: E402
from stdio_probe.core.model import Host, Options  # noqa: E402
from stdio_probe.host.checks import HOST_CHECKS  # noqa: E402
from stdio_probe.server.checks import CHECKS  # noqa: E402
from tests import host_table, server_table  # noqa: E402

STARTS = {"n": 0}
_LOCK = threading.Lock()
_SPAWN = spawn.Supervisor.spawn_command

Subject = tuple[str, str, Callable[[Options], list[dict]]]  # label, what it runs on, every check of it in a run


def _counted(self: spawn.Supervisor, *args: object, **kwargs: object) -> tuple:
    with _LOCK:
        STARTS["n"] += 1
    return _SPAWN(self, *args, **kwargs)


def servers(folder: Path) -> list[Subject]:
    """The README's server table: each server with every server check."""
    return [
        (e.server.label, e.language, lambda options, s=e.server: runner.run_servers([s], list(CHECKS), options))
        for e in server_table.entries(folder)
    ]


def hosts(folder: Path) -> list[Subject]:
    """The README's host table: each host recipe with every host check."""
    return [
        (h.name, ", ".join(h.requires) or "-",
         lambda options, h=h: runner.run_hosts([Host(h.name, h.command)], list(HOST_CHECKS), options))
        for h in host_table.installed(None)
    ]


TABLES = {"servers": servers, "hosts": hosts}


def timed(run: Callable[[Options], list[dict]], method: str, window: float) -> tuple[float, float, int, dict]:
    """Wall and CPU seconds (this process and its reaped children) of one run, its starts, its verdicts."""
    before, cpu_before, started = STARTS["n"], os.times(), time.perf_counter()
    runs = run(Options(window, method))
    wall, cpu_after = time.perf_counter() - started, os.times()
    cpu = sum(cpu_after[:4]) - sum(cpu_before[:4])
    return wall, cpu, STARTS["n"] - before, {found["case"]: found["verdict"] for found in runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=sorted(TABLES), default="servers")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--methods", default="fast,window")
    parser.add_argument("--only", help="labels of the table's subjects, comma-separated")
    parser.add_argument("--window", type=float, default=10.0)
    args = parser.parse_args()
    methods = args.methods.split(",")
    spawn.Supervisor.spawn_command = _counted
    walls: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        table = [s for s in TABLES[args.table](Path(folder)) if not args.only or s[0] in args.only.split(",")]
        for round_ in range(1, args.rounds + 1):
            for label, _, run in table:
                verdicts = {}
                for method in methods:
                    wall, cpu, starts, verdicts[method] = timed(run, method, args.window)
                    walls.setdefault((label, method), []).append(wall)
                    load = os.getloadavg()[0]
                    print(f"round {round_} {label:30} {method:6} {wall:6.1f} s  CPU {cpu:5.1f} s  {starts:3d} starts  "
                          f"load {load:.1f}", flush=True)
                if len(methods) > 1 and verdicts[methods[0]] != verdicts[methods[1]]:
                    differ = {c: (verdicts[methods[0]][c], verdicts[methods[1]][c]) for c in verdicts[methods[0]]}
                    print(f"  verdicts differ: { {c: v for c, v in differ.items() if v[0] != v[1]} }", flush=True)
    print()
    for method in methods:
        medians = [statistics.median(walls[(label, method)]) for label, _, _ in table]
        print(f"{method}: median over {args.table} {statistics.median(medians):.1f} s, slowest {max(medians):.1f} s")
    if len(methods) > 1:
        for label, runs_on, _ in table:
            fast, window = (statistics.median(walls[(label, m)]) for m in methods[:2])
            print(f"{label:30} {runs_on:12} {methods[0]} {fast:6.1f} s  {methods[1]} {window:6.1f} s  "
                  f"ratio {window / fast:4.1f}")


if __name__ == "__main__":
    main()

"""What shared arms (Probe.same_arms) save: every server check on one server, with the arms shared and with each
check starting its own, in turns within one run: starts of the server, CPU of its processes, wall time, medians
over rounds, and the verdicts of the two (which must be the same).

The server is the stdlib fixture (well behaved: S7, S8 and S9 then take all their trials), or a command given.

    .venv/bin/python bench/bench_shared_arms.py --rounds 3 [--command 'CMD' [--large-call 'TOOL {}']]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from dataclasses import replace
from unittest import mock

from common import ROOT

sys.path.insert(0, str(ROOT))

from stdio_probe.core import runner, spawn  # noqa: E402
from stdio_probe.core.model import Options, Server  # noqa: E402
from stdio_probe.server.checks import CHECKS  # noqa: E402

FIXTURE = ROOT / "stdio_probe" / "fixtures" / "fixture_check_server.py"
UNSHARED = {check_id: replace(check, same_arms={}) for check_id, check in CHECKS.items()}


def one_run(server: Server, shared: bool) -> dict:
    """Every check on server once: starts, the CPU of the processes it started, wall seconds, verdicts."""
    starts = 0
    spawn_command = spawn.Supervisor.spawn_command

    def counted(self: spawn.Supervisor, *args: object, **kwargs: object) -> object:
        nonlocal starts
        starts += 1
        return spawn_command(self, *args, **kwargs)

    checks = CHECKS if shared else UNSHARED
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with mock.patch.object(spawn.Supervisor, "spawn_command", counted), mock.patch.dict(runner.CHECKS, checks):
        runs = runner.run_servers([server], list(CHECKS), Options())
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"starts": starts, "cpu": cpu, "wall": wall, "verdicts": {run["case"]: run["verdict"] for run in runs}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--command", default=f"{sys.executable} {FIXTURE}")
    parser.add_argument("--large-call", default="large {}")
    args = parser.parse_args()
    tool, _, arguments = args.large_call.partition(" ")
    server = Server("bench", args.command, (tool, json.loads(arguments or "{}")))
    rounds: dict[bool, list[dict]] = {True: [], False: []}
    for _ in range(args.rounds):
        for shared in (True, False):  # in turns, so a change of load falls on both
            rounds[shared].append(one_run(server, shared))
    for shared, runs in rounds.items():
        medians = {key: statistics.median(run[key] for run in runs) for key in ("starts", "cpu", "wall")}
        print(f"{'shared' if shared else 'unshared'}: starts {medians['starts']:.0f}, "
              f"CPU of the server's processes {medians['cpu']:.2f} s, wall {medians['wall']:.2f} s")
    ratio = {key: statistics.median(r[key] for r in rounds[True]) / statistics.median(r[key] for r in rounds[False])
             for key in ("starts", "cpu", "wall")}
    print(f"shared/unshared: starts {ratio['starts']:.2f}, CPU {ratio['cpu']:.2f}, wall {ratio['wall']:.2f}")
    differ = [(a["verdicts"], b["verdicts"]) for a, b in zip(rounds[True], rounds[False], strict=True)
              if a["verdicts"] != b["verdicts"]]
    print("verdicts: the same in every round" if not differ else f"verdicts differ: {differ}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Proofs on hosts that exit: many runs of host checks side by side under load, each proof that fires counted.

The TypeScript SDK's host (1.32.2, on Node) and the Python SDK's host (mcp 2.2.0) exit by themselves in every
host check this bench runs (H7 by default: 1 MiB on stderr, then the answer; the host closes and exits), so
any arm decided by a proof (stuck, decided_by "proof") is a proof on a host that exits: a wrong one. Each round
is one probe run (runner.run_hosts, fast method) of COPIES copies of each host, side by side (the runner's
parallel arms), while BUSY busy loops load the machine; the loops are started by this bench and always killed,
through their pidfds. Printed: a line per round, then the counts per host, and every proven arm's readings
(what each thread waited on, the row that ruled out each wake source: tests/proof_readings.py).

    .venv/bin/python bench/proof_stress.py --rounds 25 --copies 2 --busy 2 [--checks H7] [--hosts typescript-sdk-1.32.2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stdio_probe.core import runner  # noqa: E402
from stdio_probe.core.host_contract import Pidfd  # noqa: E402
from stdio_probe.core.model import Host, Options  # noqa: E402
from tests import third_party_hosts  # noqa: E402
from tests.proof_readings import proof_readings  # noqa: E402

HOSTS = ("typescript-sdk-1.32.2", "python-sdk-2.2.0")  # pin labels
BUSY = "while True: pass"


@contextmanager
def busy_loops(count: int):
    """count busy loops (a CPU each) while the block runs; each killed through its pidfd and waited for after."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY], start_new_session=True) for _ in range(count)]
    held = [Pidfd.open(loop.pid) for loop in loops]  # our children, not waited for: their pids are their own
    try:
        yield
    finally:
        for pidfd in held:
            if pidfd is not None:
                pidfd.signal(signal.SIGKILL)
                pidfd.close()
        for loop in loops:
            loop.wait()


def hosts(labels: set[str] | None, copies: int) -> list[Host]:
    """copies of each pinned host of HOSTS (those labelled in labels, if given), installed, each copy its own label."""
    pins = [pin for pin in third_party_hosts.HOSTS if pin.label in HOSTS and (not labels or pin.label in labels)]
    chosen = [third_party_hosts.host(pin) for pin in pins]
    return [Host(f"{h.name}#{i}", h.command) for h in chosen for i in range(1, copies + 1)]


def proven_arms(run: dict) -> list[str]:
    """The arms of a run decided by a proof (the host proven stuck)."""
    return [arm for arm, record in run["arms"].items() if record.get("stuck", {}).get("decided_by") == "proof"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--copies", type=int, default=2, help="copies of each host in one round")
    parser.add_argument("--busy", type=int, default=2, help="busy loops while the rounds run")
    parser.add_argument("--checks", default="H7")
    parser.add_argument("--hosts", default="", help="labels, comma-separated (default: both)")
    args = parser.parse_args()
    chosen = hosts(set(filter(None, args.hosts.split(","))), args.copies)
    checks = args.checks.split(",")
    verdicts: dict[str, Counter] = {}
    proofs: list[str] = []
    loads = []
    with busy_loops(args.busy):
        for round_ in range(1, args.rounds + 1):
            loads.append(os.getloadavg()[0])
            started = time.monotonic()
            runs = runner.run_hosts(chosen, checks, Options(10.0, "fast"))  # reaped at its end
            for run in runs:
                host = run["host"]["label"].split("#")[0]
                verdicts.setdefault(host, Counter())[run["verdict"]] += 1
                if proven := proven_arms(run):
                    proofs.append(f"{host} {run['case']} {proven}:\n{proof_readings(run)}")
                    verdicts[host]["proven arms"] += len(proven)
            elapsed = time.monotonic() - started
            print(f"round {round_}: {len(runs)} runs, {elapsed:.1f} s, load {loads[-1]:.1f}", flush=True)
    total = sum(sum(c[v] for v in c if v != "proven arms") for c in verdicts.values())
    print(f"{total} runs of {','.join(checks)}, {args.copies} copies of each host side by side, {args.busy} busy loops")
    print(f"load average (1 min) at the rounds' start: min {min(loads):.1f}, max {max(loads):.1f}")
    for host, counts in sorted(verdicts.items()):
        print(f"{host}: " + ", ".join(f"{name} {n}" for name, n in sorted(counts.items())))
    print(f"proofs on hosts that exit: {len(proofs)}")
    for proof in proofs:
        print(proof)


if __name__ == "__main__":
    main()

"""Verdicts under load: the full suite N times with every core kept busy by a CPU hog.

Each run's verdicts are compared with one unloaded run first; prints how many agree, and per
run how many arms were exec'd (a fork server given up under load would show here).
Usage: python bench/load_agreement.py [--runs 20]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os

from common import run_probe, verdicts


def hog() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    baseline = verdicts(run_probe()[1])
    print(f"unloaded: {baseline}", flush=True)
    hogs = [multiprocessing.Process(target=hog, daemon=True) for _ in range(os.cpu_count() or 1)]
    for process in hogs:
        process.start()
    agree = 0
    try:
        for index in range(runs):
            elapsed, results = run_probe()
            seen = verdicts(results)
            agree += seen == baseline
            execd = sum(arm.get("launch") == "exec" for run in results["runs"] for arm in run["arms"].values())
            verdict = "agrees" if seen == baseline else seen
            print(f"loaded run {index + 1:2d}: {elapsed:5.2f} s  {verdict}, {execd} arms exec'd", flush=True)
    finally:
        for process in hogs:
            process.terminate()
            process.join()
    print(f"{agree}/{runs} loaded runs agree with the unloaded run")


if __name__ == "__main__":
    main()

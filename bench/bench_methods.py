"""Fast method against the article's fixed windows: the full suite, alternating, several rounds.

Prints each method's median wall time, the ratio, and whether every run's verdicts agreed.
Usage: python bench/bench_methods.py [--rounds N] [--only L1,L2,...]
"""

from __future__ import annotations

import argparse
import statistics

from common import run_probe

METHODS = ("fast", "window")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="the cases to run (default: all)")
    args = parser.parse_args()
    rounds, only = args.rounds, ["--only", args.only] if args.only else []
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    verdicts = []
    for round_ in range(rounds):
        for method in METHODS if round_ % 2 == 0 else reversed(METHODS):
            elapsed, seen = run_probe("--method", method, *only)
            times[method].append(elapsed)
            verdicts.append(seen)
            print(f"round {round_ + 1} {method:6s} {elapsed:6.2f} s  {seen}", flush=True)
    medians = {m: statistics.median(times[m]) for m in METHODS}
    for method in METHODS:
        print(f"{method:6s} median {medians[method]:6.2f} s over {rounds} runs")
    print(f"ratio window/fast: {medians['window'] / medians['fast']:.1f}x")
    print(f"verdicts agree across all {len(verdicts)} runs: {all(v == verdicts[0] for v in verdicts)}")


if __name__ == "__main__":
    main()

"""What cases added to the default run cost: the default run against a base selection, alternating.

Prints each selection's median wall time over the rounds and the difference of the medians,
the figure the issues that add cases bound (for example 1.5 s on 2 cores).
Usage: python bench/bench_case_cost.py --base L1,L2,L3,L4,L5,L6 [--rounds N] [--sdk SPEC]
"""

from __future__ import annotations

import argparse
import statistics

from common import run_probe, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True, help="the cases of the base run, as the probe's --only")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sdk", help="the SDKs to run, as the probe's --sdk (default: the pinned mcp)")
    args = parser.parse_args()
    sdk = ["--sdk", args.sdk] if args.sdk else []
    selections = {"base": ["--only", args.base, *sdk], "default": sdk}
    times: dict[str, list[float]] = {name: [] for name in selections}
    for round_ in range(args.rounds):
        for name in selections if round_ % 2 == 0 else reversed(selections):
            elapsed, results = run_probe(*selections[name])
            times[name].append(elapsed)
            print(f"round {round_ + 1} {name:7s} {elapsed:6.2f} s  {verdicts(results)}", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:7s} median {median:6.2f} s over {args.rounds} runs")
    added, ratio = medians["default"] - medians["base"], medians["default"] / medians["base"]
    print(f"added cases cost: {added:+.2f} s ({ratio:.2f}x)")


if __name__ == "__main__":
    main()

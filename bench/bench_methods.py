"""Fast method against the article's fixed windows: the same cases, alternating, several rounds.

Prints each method's median wall time, the ratio, the median delay from stdin
EOF to the L1 hang's kernel proof, and whether every run's verdicts agreed.
Usage: python bench/bench_methods.py [--rounds N] [--only L1,L2,...] [--sdk 2.2.0,2.3.0]
"""

from __future__ import annotations

import argparse
import statistics

from common import l1_proof_delays, run_probe, verdicts

METHODS = ("fast", "window")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="the cases to run (default: all)")
    parser.add_argument("--sdk", help="the SDKs to run, as the probe's --sdk (default: the pinned mcp)")
    args = parser.parse_args()
    selection = [*(["--only", args.only] if args.only else []), *(["--sdk", args.sdk] if args.sdk else [])]
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    seen, proofs = [], []
    for round_ in range(args.rounds):
        for method in METHODS if round_ % 2 == 0 else reversed(METHODS):
            elapsed, results = run_probe("--method", method, *selection)
            times[method].append(elapsed)
            seen.append(verdicts(results))
            if method == "fast":
                proofs += l1_proof_delays(results)
            print(f"round {round_ + 1} {method:6s} {elapsed:6.2f} s  {seen[-1]}", flush=True)
    medians = {m: statistics.median(times[m]) for m in METHODS}
    for method in METHODS:
        print(f"{method:6s} median {medians[method]:6.2f} s over {args.rounds} runs")
    print(f"ratio window/fast: {medians['window'] / medians['fast']:.1f}x")
    if proofs:
        print(f"L1 hang proven after stdin EOF: median {statistics.median(proofs):.2f} s, max {max(proofs):.2f} s")
    print(f"verdicts agree across all {len(seen)} runs: {all(v == seen[0] for v in seen)}")


if __name__ == "__main__":
    main()

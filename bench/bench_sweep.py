"""A sweep of every release × every case, cold (an empty cache: environments, downloads) and then warm.

Prints each sweep's wall time, the verdict counts, and the median (and range) of the time each release's
environment took to make in the cold sweep (sdk.env_created_s; four are made at a time).
Targets (issue 12): warm at most 3 min, cold at most 12 min, on 2 cores.
Usage: python bench/bench_sweep.py [--sdk SPEC]   (default: all)
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import tempfile

from common import run_probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sdk", default="all", help="the SDKs to sweep, as the probe's --sdk")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as cache:
        os.environ["XDG_CACHE_HOME"] = cache  # the probe's environments and uv's downloads alike start empty
        for name in ("cold", "warm"):
            elapsed, results = run_probe("--sdk", args.sdk)
            counts = collections.Counter(run["verdict"] for run in results["runs"])
            print(f"{name}: {elapsed:7.1f} s, {len(results['runs'])} runs, {dict(counts)}", flush=True)
            if name == "cold":
                made = {run["sdk"]["spec"]: run["sdk"].get("env_created_s") for run in results["runs"]}
                per_release = [seconds for seconds in made.values() if seconds is not None]
                if per_release:
                    print(
                        f"environment creation: median {statistics.median(per_release):.1f} s over "
                        f"{len(per_release)} releases (min {min(per_release):.1f} s, max {max(per_release):.1f} s)"
                    )


if __name__ == "__main__":
    main()

"""The README's test command on fresh clones, one after another: is the suite green on every clone, quiet or loaded?

Each run clones this checkout's HEAD into a new temporary folder and runs the quick start's test command there
exactly as the README gives it (`bash -c`, the clone as the working folder; the shared caches of SDKs, servers and
pip are a user's), first --quiet runs with nothing else started here, then --hog runs with one busy loop per core
throughout (a loaded CI runner: each loop a session of its own, so that with the kernel's autogroup scheduling it
takes a session's share against the suite's, as another job's process would). A run is never retried. Prints,
per run, the load average at its start (1, 5 and 15 minutes: a quiet run's includes what the run before it left),
its wall time, its exit code and pytest's last line; then the runs passed in a row from the first and the median
time of each kind. A failed run's output is kept
(its path is printed); the clone is removed. Ctrl-C, a run past RUN_BOUND or an error ends the run in hand: its
process group gets SIGINT (pytest's own Ctrl-C: the probe's supervisors reap what they started), then SIGKILL
2 s later (each probe run's guardian reaps what its run started), both through a pidfd of the group's leader,
our own child; the busy loops the same way.
Usage: python bench/suite_series.py [--quiet 5] [--hog 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, hogs, started

RUN_BOUND = 1800.0  # seconds one run may take (venv, install and tests) before it is ended as failed


def test_command(readme: str) -> str:
    """The second line of the first code block under "## Quick start", as .ci/run reads it."""
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```")[1].strip("\n").splitlines()[1]


def one_run(command: str, log: Path) -> tuple[float, int, str]:
    """A fresh clone, the command in it: wall seconds, exit code, pytest's last summary line."""
    with tempfile.TemporaryDirectory(prefix="suite-series-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
        begun = time.monotonic()
        with log.open("wb") as out, started(["bash", "-c", command], cwd=clone, stdout=out, stderr=out) as run:
            try:
                code = run.wait(RUN_BOUND)
            except subprocess.TimeoutExpired:
                code = -1
        elapsed = time.monotonic() - begun
    lines = [line for line in log.read_text(errors="replace").splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return elapsed, code, (lines[-1].strip(" =") if lines else "no pytest summary")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quiet", type=int, default=5, help="runs with nothing else started (default 5)")
    parser.add_argument("--hog", type=int, default=2, help="runs with a busy loop per core (default 2)")
    options = parser.parse_args()
    command = test_command((ROOT / "README.md").read_text())
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    cores = os.cpu_count() or 1
    logs = Path(tempfile.mkdtemp(prefix="suite-series-logs-"))
    print(f"{head.strip()}: {command}\n{cores} cores; hog: {cores} busy loops", flush=True)
    results: list[tuple[str, float, int]] = []
    kinds = [("quiet", index) for index in range(options.quiet)] + [("hog", index) for index in range(options.hog)]
    for kind, index in kinds:
        name = f"{kind} {index + 1}"
        load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
        log = logs / f"{kind}-{index + 1}.log"
        with hogs(cores) if kind == "hog" else contextlib.nullcontext():
            elapsed, code, summary = one_run(command, log)
        results.append((kind, elapsed, code))
        kept = f"; output: {log}" if code else ""
        print(f"{name:7} load at start {load:20}  {elapsed / 60:5.1f} min  exit {code}  {summary}{kept}", flush=True)
        if not code:
            log.unlink()
    in_row = next((index for index, (_, _, code) in enumerate(results) if code), len(results))
    print(f"\npassed in a row from the first: {in_row} of {len(results)}")
    for kind in ("quiet", "hog"):
        times = [elapsed for found, elapsed, _ in results if found == kind]
        if times:
            print(f"median {kind}: {statistics.median(times) / 60:.1f} min over {len(times)}")
    with contextlib.suppress(OSError):
        logs.rmdir()  # empty unless a run failed


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the run in hand was ended on the way out (started)
        print("interrupted", file=sys.stderr)
        sys.exit(130)

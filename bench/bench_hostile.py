"""The probe's peak RSS against each flood shape (issue 25's memory bound: 128 MiB, whatever a server writes).

Each shape is tests/hostile_server.py flooding stdout after its initialize answer (empty lines, "1"
lines, one endless line, random bytes), or chattering 2 MB before it; the CLI runs every check on it
(S2 with a 120 KB large call) with a short window. The peak is the probe process's ru_maxrss from
wait4 (its servers, smaller, are counted only if larger).

    .venv/bin/python bench/bench_hostile.py --window 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT

HOSTILE = ROOT / "tests" / "hostile_server.py"
SHAPES = ("flood-empty", "flood-short", "flood-line", "flood-binary", "chatty")
BOUND_MIB = 128


def peak(shape: str, window: float) -> tuple[float, float, dict]:
    """Peak RSS (MiB) and wall seconds of one CLI run on shape, and its verdicts."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        large = "big " + json.dumps({"x": "a" * 120_000})
        argv = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), "--out", str(out), "--window", str(window)]
        argv += ["--server", f"{sys.executable} {HOSTILE} {shape}", "--large-call", large]
        started = time.perf_counter()
        with open(Path(folder) / "report.txt", "w") as report:
            process = subprocess.Popen(argv, stdout=report, stderr=report)
            _, _, usage = os.wait4(process.pid, 0)
            process.returncode = 0  # waited for here: Popen must not wait again
        elapsed = time.perf_counter() - started
        verdicts = {run["case"]: run["verdict"] for run in json.loads(out.read_text())["runs"]}
        return usage.ru_maxrss / 1024, elapsed, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=5.0)
    args = parser.parse_args()
    worst = 0.0
    for shape in SHAPES:
        mib, elapsed, verdicts = peak(shape, args.window)
        worst = max(worst, mib)
        print(f"{shape:13} peak RSS {mib:6.1f} MiB  {elapsed:5.1f} s  {verdicts}", flush=True)
    print(f"worst peak {worst:.1f} MiB (bound {BOUND_MIB} MiB): {'held' if worst < BOUND_MIB else 'NOT held'}")


if __name__ == "__main__":
    main()

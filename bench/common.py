"""One timed probe run as a user runs it: the CLI in a subprocess, its verdicts read back."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_probe(*args: str) -> tuple[float, dict[str, str]]:
    """Wall seconds of one full CLI run and its verdicts by case; raises if the run fails."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), "--out", str(out), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
        )
        elapsed = time.perf_counter() - started
        runs = json.loads(out.read_text())["runs"]
    return elapsed, {f"{run['sdk']['spec']}:{run['case']}": run["verdict"] for run in runs}

"""One timed probe run as a user runs it: the CLI in a subprocess, its results read back."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_probe(*args: str) -> tuple[float, dict]:
    """Wall seconds of one full CLI run and its results.json; raises if the run fails."""
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
        return elapsed, json.loads(out.read_text())


def verdicts(results: dict) -> dict[str, str]:
    """The verdict of each (SDK, case), keyed "spec:case"."""
    return {f"{run['sdk']['spec']}:{run['case']}": run["verdict"] for run in results["runs"]}


def l1_proof_delays(results: dict) -> list[float]:
    """Seconds from stdin EOF to the kernel proof of the L1 hang, per SDK and bug arm (transport, server API)
    decided by proof."""
    bugs = ("bug", "bug_server_api")
    arms = [run["arms"].get(arm, {}) for run in results["runs"] if run["case"] == "L1" for arm in bugs]
    return [arm["decided_after_eof_s"] for arm in arms if arm.get("decided_by") == "proof"]

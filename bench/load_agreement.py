"""Verdicts under load: the server and host checks, once on a quiet machine, then N times with every core busy.

Subjects: the server checks on the fixture server (fixtures/fixture_check_server.py) and on a real Python SDK
server (tests/servers/py_lowlevel.py on the server table's pinned mcp), the host checks on the Python SDK host
(examples/hosts/python_sdk_client.py on the host table's pinned mcp). Each round is one CLI run per subject
kind (server, host), in a subprocess, as a user runs it. The loaded rounds run with one busy-loop process per
core, started here and always killed and reaped (Ctrl-C included). Prints, per subject and check, the quiet
verdict, the loaded ones and how many agree; per round its wall time and the load average (1 min) at its end.
Usage: python bench/load_agreement.py [--runs 20] [--window 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import hogs  # noqa: E402

from tests import third_party, third_party_hosts  # noqa: E402

RUN_BOUND = 1800.0  # seconds one CLI run may take, loaded, before it is killed (and the bench fails)
SLOW = 'slow {"seconds": 0.5}'


def subjects() -> list[list[str]]:
    """The CLI argument lists of one round: the two servers in one run, the Python SDK host in another."""
    fixture = shlex.join([sys.executable, str(ROOT / "stdio_probe" / "fixtures" / "fixture_check_server.py")])
    sdk_python = third_party.python_env(third_party.TABLE_PYTHON["python-sdk"]) / "python"
    real = shlex.join([str(sdk_python), str(ROOT / "tests" / "servers" / "py_lowlevel.py")])
    servers = ["server", fixture, "--name", "fixture", "--large-call", "large", "--slow-call", SLOW]
    servers += ["--server", real, "--name", "py-sdk-lowlevel", "--large-call", "large", "--slow-call", SLOW]
    host = third_party_hosts.host(third_party_hosts.HOSTS[0])
    return [servers, ["host", host.command, "--name", host.name]]


def run_round(args: list[list[str]], window: float) -> tuple[float, float, dict[str, str]]:
    """One round: each CLI run in turn; its wall seconds, the load average at its end, each cell's verdict."""
    started, found = time.monotonic(), {}
    for argv in args:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "results.json"
            command = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), *argv]
            command += ["--window", f"{window:g}", "--out", str(out)]
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, timeout=RUN_BOUND)
            for run in json.loads(out.read_text())["runs"]:
                subject = (run.get("server") or run.get("host"))["label"]
                found[f"{subject}:{run['case']}"] = run["verdict"]
    return time.monotonic() - started, os.getloadavg()[0], found


def table(quiet: dict[str, str], loaded: list[dict[str, str]]) -> list[str]:
    """A line per cell: the quiet verdict, the loaded ones in order, how many agree."""
    lines = []
    for cell, verdict in sorted(quiet.items()):
        seen = [found.get(cell, "missing") for found in loaded]
        agree = sum(v == verdict for v in seen)
        marks = " ".join("=" if v == verdict else v for v in seen)
        lines.append(f"{cell:28s} {verdict:15s} {agree}/{len(seen)} agree  {marks}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20, help="loaded rounds (default 20)")
    parser.add_argument("--window", type=float, default=10.0, help="the probe's window, seconds (default 10)")
    options = parser.parse_args()
    args, cores = subjects(), os.cpu_count() or 1
    elapsed, load, quiet = run_round(args, options.window)
    print(f"quiet round: {elapsed:6.1f} s, load {load:5.2f} at its end", flush=True)
    loaded = []
    with hogs(cores):
        for index in range(options.runs):
            elapsed, load, found = run_round(args, options.window)
            loaded.append(found)
            differ = sum(found.get(cell) != verdict for cell, verdict in quiet.items())
            print(
                f"loaded round {index + 1:2d}: {elapsed:6.1f} s, load {load:5.2f} at its end, {differ} cells differ",
                flush=True,
            )
    print(f"\n{cores} busy-loop processes (one per core) during the loaded rounds; '=' agrees with the quiet run")
    print("\n".join(table(quiet, loaded)))
    cells = len(quiet) * len(loaded)
    agreeing = sum(found.get(cell) == verdict for found in loaded for cell, verdict in quiet.items())
    print(f"{agreeing}/{cells} loaded cells agree with the quiet run")


if __name__ == "__main__":
    main()

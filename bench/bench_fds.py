"""The probe's own open fds over a sweep: the peak and the last count, sampled from /proc every 0.1 s.

Each finished arm's pipes, sockets and files are closed (Supervisor.arm_scope), so the count stays bounded
by the arms running at once and the fork servers alive, however many SDKs a sweep covers; before that
fix it grew with every SDK (405 at the peak of a sweep of every release), and past 1024 select(2)
failed in the host contract's drain.
Usage: python bench/bench_fds.py [--sdk SPEC]   (default: all)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT


def open_fds(pid: int) -> int | None:
    """How many fds pid has open; None once it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sdk", default="all", help="the SDKs to sweep, as the probe's --sdk")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        command = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), "--sdk", args.sdk, "--out", str(out)]
        started = time.perf_counter()
        probe = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=ROOT)
        peak, last, counts = 0, 0, []
        while probe.poll() is None:
            if (count := open_fds(probe.pid)) is not None:
                peak, last = max(peak, count), count
                counts.append(count)
            time.sleep(0.1)
        elapsed = time.perf_counter() - started
    quarter = len(counts) // 4 or 1
    print(
        f"--sdk {args.sdk}: {elapsed:.1f} s, exit {probe.returncode}, probe fds: peak {peak}, last {last}, "
        f"peak in the first quarter {max(counts[:quarter], default=0)}, in the last {max(counts[-quarter:], default=0)}"
    )


if __name__ == "__main__":
    main()

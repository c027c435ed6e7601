"""L12 on the pinned SDK, its event loop's gap before epoll_wait(2) widened: what the three SIGINTs do.

L12 says the SDK's stdio server needs a third SIGINT while its stdin is open. asyncio.Runner's SIGINT handler is a
Python handler and its loop keeps no signal wakeup fd, so a SIGINT that lands after the interpreter's last check for
signals and before epoll_wait(2) begins is handled only when the loop next wakes, with the next SIGINT: CPython
runs a signal's handler once for however many arrived meanwhile. Two SIGINTs then count as one, and the third
leaves the server running as the second would have. The probe sends each SIGINT only once the main thread has been
seen asleep (l12_sigint.main_asleep), which this checks: the gap is a few instructions, so a run rarely meets it,
and here it is widened by a shim preloaded into the SDK's processes (LD_PRELOAD in the SDK's environment, compiled
here with cc) that sleeps WIDEN_S before every epoll_wait(2). Each round is one fast run of L12
(runner.run_matrix), with the shim and without it, in turn; printed: the verdict and the bug arm's outcomes after
its SIGINTs (with the exit code of the one that ended it), counted.

    python bench/l12_coalesced_sigint.py [--rounds 10]

Needs cc; without it, one line and exit 2.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from common import delaying_shim

from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.sdk.sdk import pinned

# shorter than sample.SAMPLE_INTERVAL: a longer sleep in the shim would read as the main thread asleep
# (l12_sigint.main_asleep), and the SIGINT would land in the gap by the bench's doing
WIDEN_S = 0.02


def outcomes(run: dict) -> str:
    """The bug arm's outcome after each SIGINT, or why it has none."""
    sigints = run["arms"]["bug"].get("sigints")
    if not sigints:
        return f"no SIGINT sent: {run['reason']}"
    return " ".join(f"{step['outcome']} ({step['exit_code']})" if step["exit_code"] is not None else step["outcome"]
                    for step in sigints)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if shutil.which("cc") is None:
        parser.exit(2, "l12_coalesced_sigint.py: no cc to compile the epoll_wait shim with\n")
    with tempfile.TemporaryDirectory() as folder:
        shim = delaying_shim(Path(folder), "epoll_wait", WIDEN_S)
        sdks = {"stock": pinned(), f"epoll_wait delayed {WIDEN_S * 1000:g} ms": pinned(env={"LD_PRELOAD": str(shim)})}
        found: dict[str, Counter] = {name: Counter() for name in sdks}
        for round_ in range(args.rounds):
            for name, sdk in sdks.items():
                [run] = run_matrix([sdk], ["L12"], Options())
                found[name][f"{run['verdict']}: {outcomes(run)}"] += 1
                print(f"round {round_ + 1} {name}: {run['verdict']}, {outcomes(run)}", flush=True)
    for name, counted in found.items():
        for seen, count in counted.most_common():
            print(f"{name:28s} {count} of {args.rounds}: {seen}")


if __name__ == "__main__":
    main()

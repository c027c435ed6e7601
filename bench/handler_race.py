"""The host checks' scenario server against a signal that lands just before a wait: how often it outlives it.

CPython runs a signal's Python handler only between bytecodes: a signal that lands after the interpreter's last
check and before poll(2) begins sets a flag and nothing else, and a wait with no timeout then sleeps through it
(the race the S9 fixture had, docs/measurements.md). The gap is a few instructions, so a plain stress almost never
meets it. This widens it: a shim preloaded into the server (LD_PRELOAD, compiled here with cc) sleeps WIDEN_S
before every poll(2), resuming after a signal as a preempted thread would, so the probe's SIGTERM, sent the moment
the server logs the event before its wait, lands in the gap every time. A server whose wait also polls its
signal wakeup pipe wakes anyway; one that does not sleeps on. Each run: start the server (SHAPES), send a ping,
close stdin where the shape waits after EOF, SIGTERM through a pidfd at the event; it is stuck when alive STUCK_S
later (then ended: SIGINT, SIGKILL), ended when it logged the signal and exited. A run that shows neither (no
event in EVENT_BOUND, the shim not in the server's maps, an exit without the signal logged) is counted apart and
shows nothing. `ignore_term` is the control: it must outlive every SIGTERM.

    python bench/handler_race.py [--runs 40] [--rev REV]

--rev takes scenario_server.py from a git revision (for example one before the wakeup pipe) instead of the
working tree. Needs cc; without it, one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import ROOT, delaying_shim, started

from stdio_probe.core.host_contract import Pidfd

FIXTURES = ROOT / "stdio_probe" / "fixtures"
WIDEN_S = 0.02
STUCK_S = 2.0
EVENT_BOUND = 10.0  # seconds to wait for the event before the signal (a safety net)
# shape -> (its traits, the event logged just before the wait the signal must end, whether stdin is closed first)
SHAPES = {
    "waiting on stdin": ("", "message", False),
    "ignoring EOF": ("ignore_eof", "stdin_eof", True),
    "control: ignoring SIGTERM": ("ignore_term", "stdin_eof", True),
}


def prepare(folder: Path, rev: str | None) -> tuple[Path, Path]:
    """The server (from rev, or the working tree) and its fixture_events.py in folder, and the compiled shim."""
    if rev:
        shown = ["git", "show", f"{rev}:stdio_probe/fixtures/scenario_server.py"]
        source = subprocess.run(shown, cwd=ROOT, check=True, capture_output=True, text=True, timeout=60).stdout
    else:
        source = (FIXTURES / "scenario_server.py").read_text()
    (folder / "scenario_server.py").write_text(source)
    shutil.copy(FIXTURES / "fixture_events.py", folder)
    return folder / "scenario_server.py", delaying_shim(folder, "poll", WIDEN_S)


def logged(events: Path, event: str) -> bool:
    return events.exists() and f'"event": "{event}"' in events.read_text()


def one_run(server: Path, shim: Path, traits: str, event: str, close: bool, folder: Path) -> str:
    """What a SIGTERM sent the moment the server logged event found: "stuck" (alive STUCK_S later), "ended" (it
    logged the signal and exited), or why the run shows neither."""
    events = folder / "events.jsonl"
    events.unlink(missing_ok=True)
    argv = [sys.executable, str(server), "--events", str(events), "--run", "r", "--tag", "t", "--scenario", traits]
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(shim)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with started(argv, stdin=subprocess.PIPE, env=env, cwd=folder, **quiet) as process:
        held = Pidfd.open(process.pid)  # our child, not yet waited for: None only without pidfds
        if held is None:
            process.stdin.close()
            return "no pidfd"
        try:
            return _signalled(process, held, shim, event, close, events)
        finally:
            held.close()
            process.stdin.close()


def _signalled(
    process: subprocess.Popen, held: Pidfd, shim: Path, event: str, close: bool, events: Path
) -> str:
    """one_run's trigger and reading, on the started server held by a pidfd."""
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
    process.stdin.flush()
    if close:
        process.stdin.close()
    deadline = time.monotonic() + EVENT_BOUND
    while time.monotonic() < deadline and not logged(events, event):
        time.sleep(0.001)
    if not logged(events, event):
        return "no event"
    try:
        shimmed = str(shim) in Path(f"/proc/{process.pid}/maps").read_text()
    except OSError:  # ended already
        return "ended before the signal"
    if not shimmed:
        return "no shim"
    held.signal(signal.SIGTERM)
    try:
        process.wait(STUCK_S)
    except subprocess.TimeoutExpired:
        return "stuck"
    return "ended" if logged(events, "signal") else "exit without the signal logged"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rev", help="a git revision to take scenario_server.py from (default: the working tree)")
    args = parser.parse_args()
    if shutil.which("cc") is None:
        parser.exit(2, "handler_race.py: no cc to compile the poll shim with\n")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        server, shim = prepare(folder, args.rev)
        print(f"scenario_server.py from {args.rev or 'the working tree'}; each poll(2) delayed {WIDEN_S * 1000:g} ms")
        for shape, (traits, event, close) in SHAPES.items():
            found = Counter(one_run(server, shim, traits, event, close, folder) for _ in range(args.runs))
            apart = ", ".join(f"{why} {count}" for why, count in found.items() if why not in ("stuck", "ended"))
            line = f"{shape:28s} stuck {found['stuck']} of {args.runs}, ended {found['ended']}"
            print(f"{line}{f'; apart: {apart}' if apart else ''}", flush=True)


if __name__ == "__main__":
    main()

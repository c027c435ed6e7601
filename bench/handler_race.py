"""Fixtures whose signal handlers are Python's, against a signal that lands just before a wait: how often they
outlive it.

CPython runs a signal's Python handler only between bytecodes: a signal that lands after the interpreter's last
check and before the wait begins sets a flag and nothing else, and a wait with no timeout then sleeps through it
(the race the S9 fixture had, docs/measurements.md). The gap is a few instructions, so a plain stress almost never
meets it. This widens it: a shim preloaded into the fixture (LD_PRELOAD, compiled here with cc) sleeps WIDEN_S
before every call of the waits the shape's fixture may block in (poll(2), and for the client cases' server also
read(2) and clock_nanosleep(2), its waits before fixture_wakeup.py), resuming after a signal as a preempted thread
would, so the probe's SIGTERM, sent the moment the fixture logs the event before its wait, lands in the gap every
time. A fixture whose wait also polls its signal wakeup pipe wakes anyway; one that does not sleeps on. Each
run: start the fixture (SHAPES), send a ping and close its stdin where the shape says so, SIGTERM through a pidfd
at the event; it is stuck when alive STUCK_S later (then ended: SIGINT, SIGKILL), ended when it logged the signal
and exited. A run that shows neither (no event in EVENT_BOUND, a shim not in the fixture's maps, an exit without
the signal logged) is counted apart and shows nothing. The scenario server's `ignore_term` is the control: it must
outlive every SIGTERM.

    python bench/handler_race.py [--runs 40] [--rev REV]

--rev takes the fixtures from a git revision (for example one before the wakeup pipe) instead of the working
tree (a file the revision lacks, from the working tree). Needs cc; without it, one line and exit 2.
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
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, delaying_shim, started

from stdio_probe.core.host_contract import Pidfd

FIXTURES = ROOT / "stdio_probe" / "fixtures"
COPIED = ("scenario_server.py", "fixture_server.py", "fixture_events.py", "fixture_wakeup.py")
WIDEN_S = 0.02
STUCK_S = 2.0
EVENT_BOUND = 10.0  # seconds to wait for the event before the signal (a safety net)


@dataclass(frozen=True)
class Shape:
    """A fixture started with args, the event it logs just before the wait the signal must end, whether a ping is
    sent and its stdin closed first, and the calls delayed in it (the waits it may block in, in any revision)."""

    fixture: str
    args: tuple[str, ...]
    event: str
    ping: bool
    close: bool
    delayed: tuple[str, ...]


SCENARIO = ("--run", "r", "--tag", "t", "--scenario")
CLIENT_CASES_WAITS = ("poll", "read", "clock_nanosleep")
SHAPES = {
    "scenario: waiting on stdin": Shape("scenario_server.py", (*SCENARIO, ""), "message", True, False, ("poll",)),
    "scenario: ignoring EOF": Shape(
        "scenario_server.py", (*SCENARIO, "ignore_eof"), "stdin_eof", True, True, ("poll",)
    ),
    "scenario control: ignoring SIGTERM": Shape(
        "scenario_server.py", (*SCENARIO, "ignore_term"), "stdin_eof", True, True, ("poll",)
    ),
    "L9-L10 server: waiting on stdin": Shape(
        "fixture_server.py", ("--log-signals",), "start", False, False, CLIENT_CASES_WAITS
    ),
    "L10 server: lingering after EOF": Shape(
        "fixture_server.py", ("--log-signals", "--on-eof", "linger"), "stdin_eof", True, True, CLIENT_CASES_WAITS
    ),
}


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def prepare(folder: Path, rev: str | None) -> tuple[dict[str, Path], list[str]]:
    """The fixtures in folder, from rev (a commit) where it has them, else from the working tree; each delayed
    call's shim, and the names rev lacked."""
    lacked = []
    for name in COPIED:
        path = f"stdio_probe/fixtures/{name}"
        if rev and git("cat-file", "-e", f"{rev}:{path}").returncode == 0:
            source = git("show", f"{rev}:{path}").stdout
        else:
            source = (FIXTURES / name).read_text()
            lacked += [name] if rev else []
        (folder / name).write_text(source)
    calls = {call for shape in SHAPES.values() for call in shape.delayed}
    return {call: delaying_shim(folder, call, WIDEN_S) for call in sorted(calls)}, lacked


def logged(events: Path, event: str) -> bool:
    return events.exists() and f'"event": "{event}"' in events.read_text()


def one_run(shape: Shape, shims: list[Path], folder: Path) -> str:
    """What a SIGTERM sent the moment the fixture logged the shape's event found: "stuck" (alive STUCK_S later),
    "ended" (it logged the signal and exited), or why the run shows neither."""
    events = folder / "events.jsonl"
    events.unlink(missing_ok=True)
    argv = [sys.executable, str(folder / shape.fixture), "--events", str(events), *shape.args]
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": ":".join(map(str, shims))}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with started(argv, stdin=subprocess.PIPE, env=env, cwd=folder, **quiet) as process:
        held = Pidfd.open(process.pid)  # our child, not yet waited for: None only without pidfds
        if held is None:
            process.stdin.close()
            return "no pidfd"
        try:
            return _signalled(process, held, shims, shape, events)
        finally:
            held.close()
            process.stdin.close()


def _signalled(process: subprocess.Popen, held: Pidfd, shims: list[Path], shape: Shape, events: Path) -> str:
    """one_run's trigger and reading, on the started fixture held by a pidfd."""
    if shape.ping:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
        process.stdin.flush()
    if shape.close:
        process.stdin.close()
    deadline = time.monotonic() + EVENT_BOUND
    while time.monotonic() < deadline and not logged(events, shape.event):
        time.sleep(0.001)
    if not logged(events, shape.event):
        return "no event"
    try:
        maps = Path(f"/proc/{process.pid}/maps").read_text()
    except OSError:  # ended already
        return "ended before the signal"
    if not all(str(shim) in maps for shim in shims):
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
    parser.add_argument("--rev", help="a git revision to take the fixtures from (default: the working tree)")
    args = parser.parse_args()
    if shutil.which("cc") is None:
        parser.exit(2, "handler_race.py: no cc to compile the shims with\n")
    if args.rev and git("rev-parse", "--verify", "--quiet", f"{args.rev}^{{commit}}").returncode != 0:
        parser.exit(2, f"handler_race.py: no commit {args.rev} in this checkout\n")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        shims, lacked = prepare(folder, args.rev)
        source = args.rev or "the working tree"
        if lacked:
            source += f" ({', '.join(lacked)}: from the working tree)"
        print(f"fixtures from {source}; the waits each delayed {WIDEN_S * 1000:g} ms")
        for name, shape in SHAPES.items():
            delayed = [shims[call] for call in shape.delayed]
            found = Counter(one_run(shape, delayed, folder) for _ in range(args.runs))
            apart = ", ".join(f"{why} {count}" for why, count in found.items() if why not in ("stuck", "ended"))
            line = f"{name:36s} stuck {found['stuck']} of {args.runs}, ended {found['ended']}"
            print(f"{line}{f'; apart: {apart}' if apart else ''}", flush=True)


if __name__ == "__main__":
    main()

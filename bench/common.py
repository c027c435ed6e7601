"""One timed probe run as a user runs it: the CLI in a subprocess, its results read back."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stdio_probe.core.host_contract import Pidfd  # noqa: E402

INTERRUPT_GRACE = 2.0  # seconds a group gets after SIGINT to end before SIGKILL (Ctrl-C's bound)
HOG = "while True:\n    pass\n"


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


@contextlib.contextmanager
def started(argv: list[str], **popen: object) -> Iterator[subprocess.Popen]:
    """argv as the leader of a process group of its own, held by a pidfd while it runs; on leaving the block its
    group gets SIGINT, then SIGKILL after INTERRUPT_GRACE, and the leader is reaped (an exit on its own included)."""
    process = subprocess.Popen(argv, start_new_session=True, **popen)
    held = Pidfd.open(process.pid)  # our child, not yet waited for: the number is still its own
    try:
        yield process
    finally:
        if held is not None:
            for sig, grace in ((signal.SIGINT, INTERRUPT_GRACE), (signal.SIGKILL, 0.0)):
                if process.poll() is not None or not held.signal_group(sig):
                    break
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(grace)
            held.signal_group(signal.SIGKILL)  # what the leader left in its group when it ended
            held.close()
        process.wait()


# the calls delaying_shim can delay: their C prototype, the arguments it passes on, their header
WAITS = {
    "poll": ("int poll(struct pollfd *a, nfds_t b, int c)", "a, b, c", "#include <poll.h>"),
    "read": ("ssize_t read(int a, void *b, size_t c)", "a, b, c", "#include <unistd.h>"),
    "clock_nanosleep": (
        "int clock_nanosleep(clockid_t a, int b, const struct timespec *c, struct timespec *d)",
        "a, b, c, d",
        "#include <time.h>",
    ),
    "epoll_wait": (
        "int epoll_wait(int a, struct epoll_event *b, int c, int d)",
        "a, b, c, d",
        "#include <sys/epoll.h>",
    ),
}
SHIM = """#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <time.h>
{include}
{prototype} {{
    static __typeof__({call}) *real;
    if (!real) real = dlsym(RTLD_NEXT, "{call}");
    struct timespec t = {{{whole}, {nanoseconds}}}, left;
    while (nanosleep(&t, &left) == -1 && errno == EINTR) t = left;
    return real({arguments});
}}
"""


def delaying_shim(folder: Path, call: str, seconds: float) -> Path:
    """A library for LD_PRELOAD (compiled with cc into folder) that sleeps seconds before each call of call (WAITS),
    resuming after a signal as a preempted thread would: the gap between CPython's last check for signals and the
    wait, made long enough for a signal to land in it every time."""
    prototype, arguments, include = WAITS[call]
    source = folder / f"delay_{call}.c"
    whole, nanoseconds = divmod(round(seconds * 1e9), 10**9)
    text = SHIM.format(include=include, prototype=prototype, call=call, whole=whole, nanoseconds=nanoseconds,
                       arguments=arguments)
    source.write_text(text)
    shim = folder / f"delay_{call}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, source, "-ldl"], check=True, timeout=60)
    return shim


@contextlib.contextmanager
def hogs(count: int) -> Iterator[None]:
    """count busy loops for the block, ended whatever happens."""
    with contextlib.ExitStack() as stack:
        for _ in range(count):
            quiet = {"stdin": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}  # its KeyboardInterrupt unprinted
            stack.enter_context(started([sys.executable, "-c", HOG], **quiet))
        yield

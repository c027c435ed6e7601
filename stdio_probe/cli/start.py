"""The first code of every entry point: SIGINT or SIGTERM from here on is one line and 130 or 143.

Until the CLI can stop a run (cli.main puts its own handlers in place of these), nothing has been
spawned, so a signal ends the process at once: no KeyboardInterrupt traceback from inside an import.
Only the first signal counts: once one arrived (here or in cli), any later one does nothing, so the
cleanup it started prints nothing more. Imports nothing but os and signal, so the handlers come before
anything slow.
"""

from __future__ import annotations

import contextlib
import os
import signal

CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal, as a shell reports it
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
received: list[int] = []  # the first SIGINT or SIGTERM of the process (of the run, for cli.main)


def main() -> None:
    """The console script, python -m stdio_probe and probe_stdio_lifecycle.py: handlers first, then the CLI."""
    install()
    from stdio_probe.cli.main import entry_point  # only now: its imports take up to a second, under the handlers

    entry_point()


def install() -> None:
    """End at once on SIGINT or SIGTERM; a signal ignored at start (SIGINT in a background job) stays ignored."""
    for sig in CODES:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _end_now)


def _end_now(signum: int, frame: object) -> None:
    """One line and the signal's code; os._exit, so no interpreter shutdown (and no traceback) follows."""
    if received:
        return
    received.append(signum)
    with contextlib.suppress(OSError):  # stderr may be closed
        os.write(2, f"{WORDS[signum]}: nothing left running\n".encode())
    os._exit(CODES[signum])

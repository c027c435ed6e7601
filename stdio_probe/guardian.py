"""The guardian: outside the probe's process, it reaps what the probe started when the probe dies.

spawn starts one before the probe's first child (python -m stdio_probe.guardian NAME VALUE), in a
session of its own, its stdin the read end of a pipe only the probe holds the write end of. The pipe
reads EOF when the probe ends, however it ends: SIGKILL and a crash included, which no handler in the
probe can cover. The guardian then kills every process carrying NAME=VALUE (the run marker) in the
rounds spawn.kill_rounds runs, and exits. After a normal end the probe has reaped its run already and
the guardian finds nothing. It carries no marker itself, and no secret: its environment is
spawn.GUARDIAN_ENV, and it is made undumpable as the probe is.
"""

from __future__ import annotations

import os
import signal
import sys

from stdio_probe import sample, spawn


def main(name: str, value: str) -> None:
    spawn.undumpable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the probe's Ctrl-C is the probe's to handle
    while os.read(0, 4096):
        pass
    spawn.kill_rounds(lambda: {p["pid"]: p for p in sample.marked_processes(name, value)}, spawn.TERM_GRACE)


if __name__ == "__main__":
    main(*sys.argv[1:3])

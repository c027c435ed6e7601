"""The guardian: outside the probe's process, it reaps what the probe started when the probe dies.

spawn starts one before the probe's first child (python -m stdio_probe.core.guardian), in a session of its
own, its stdin the read end of a pipe only the probe holds the write end of; the probe writes the run
marker's value and its folder's path into it first (every run's Supervisor.run_folder is made inside).
The pipe reads EOF when the probe ends, however it ends: SIGKILL and a crash included, which no handler in
the probe can cover. The guardian then kills every process carrying the run marker (spawn.reap_marked),
removes that folder, and goes on until a pass finds nothing of the run and the folder gone (within
SETTLE_BOUND): a pid hopper can outrun one pass's SIGKILL rounds on a loaded machine, and one pass left the
folder in a suite run under load (its removal's errors are ignored: what is gone is gone). Then it exits.
After a normal end the probe has reaped its run already and the guardian finds nothing to kill. It carries no
marker itself, in its environment or its command line, and no secret: its environment is spawn.GUARDIAN_ENV,
and it is made undumpable as the probe is.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

from stdio_probe.core import spawn

HANDED_LIMIT = 65536  # what the probe writes is two lines; more is not read
SETTLE_BOUND = 20.0  # seconds of passes (reap, remove) while one still finds a process of the run or the folder


def main() -> None:
    spawn.undumpable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the probe's Ctrl-C is the probe's to handle
    handed = b""
    while chunk := os.read(0, 4096):
        handed = (handed + chunk)[:HANDED_LIMIT]
    run_id, folder = handed.decode().split("\n")[:2]
    deadline = time.monotonic() + SETTLE_BOUND
    while True:
        found = spawn.reap_marked(spawn.MARKER, run_id, argv=True)
        shutil.rmtree(folder, ignore_errors=True)
        if (not found and not os.path.exists(folder)) or time.monotonic() >= deadline:
            return


if __name__ == "__main__":
    main()

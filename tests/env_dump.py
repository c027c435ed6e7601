"""What a process can read of its own environment and each ancestor's, from /proc/PID/environ: a subject
under test that reads its parent's secrets (tests/core/test_secrets.py).

    python env_dump.py ARGV...

writes the dump (report) and execs ARGV, which keeps the pid: a host so wrapped dumps as the host.
hostile_server.py's dump-env mode reports it too, and answers with it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def environ_of(pid: int) -> str:
    """pid's environment, its entries on one line, or why it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError as exc:
        return f"environ of {pid}: unreadable ({type(exc).__name__})"
    return f"environ of {pid}: " + " ".join(entry for entry in raw.decode("utf-8", "replace").split("\0") if entry)


def lineage() -> list[int]:
    """This process and every process above it, nearest first (a parent's pid is in /proc/PID/stat, readable
    whatever its environ is)."""
    pids = [os.getpid()]
    while (parent := int(Path(f"/proc/{pids[-1]}/stat").read_text().rsplit(")", 1)[1].split()[1])) > 0:
        pids.append(parent)
    return pids


def report() -> None:
    """Every environment of the lineage on stderr, the farthest first (a bounded stderr keeps its last bytes:
    the nearest); the parent's on stdout, as a log line."""
    os.write(2, "".join(f"{environ_of(pid)}\n" for pid in reversed(lineage())).encode())
    os.write(1, f"{environ_of(os.getppid())}\n".encode())


if __name__ == "__main__":
    report()
    os.execv(sys.argv[1], sys.argv[1:])

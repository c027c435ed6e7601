"""results.json: the metadata of this run, the runs, and an atomic write.

SCHEMA_VERSION history:
  1  first contract: metadata, runs[] with case, sdk, verdict, reason, arms.
  2  arms.mitigated (the bug's trigger with stdio_probe.host_contract applied) and
     runs[].mitigation {"held": bool|null, "note": str}; the verdict still comes
     from bug and control only.
  3  runs across SDKs: sdk.source ("pypi", "path", "interpreter") required, sdk.env_tool and
     sdk.content_hash for SDK environments; an SDK that could not be made ready gives error runs
     whose sdk has spec and source only and whose arms are {}; an arm may carry not_applicable.
  4  arms carry launch ("exec", or "fork_server" in the fast method) and, for a fixture exec'd
     because its SDK's fork server died or stalled, fork_server_unavailable (why).
  5  runs[].pairs (a case's second bug/control pair, e.g. L1 and L2 through the SDK's high-level
     server API: {name: {verdict, reason}}); arms carry sdk_config (what the arm set explicitly and
     the SDK's defaults, read from the SDK), fixture, and L1's proof_attempts.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from stdio_probe import __version__, package_file, sample
from stdio_probe.model import Options

SCHEMA_VERSION = 5
SCHEMA_PATH = package_file("results.schema.json")


def default_pipe_capacity() -> int:
    """The capacity of a fresh pipe on this host (64 KiB by Linux default)."""
    read_fd, write_fd = os.pipe()
    try:
        return sample.pipe_fill(read_fd)["capacity"]
    finally:
        os.close(read_fd)
        os.close(write_fd)


def metadata(options: Options, argv: list[str], started: datetime.datetime) -> dict:
    """Facts about this host and this invocation, hoisted out of the runs."""
    return {
        "probe_version": __version__,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "argv": argv,
        "platform": platform.platform(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "probe_python": platform.python_version(),
        "pipe_capacity": default_pipe_capacity(),
        "method": options.method,
        "window_s": options.window,
    }


def results(meta: dict, runs: list[dict]) -> dict:
    return {"schema_version": SCHEMA_VERSION, "metadata": meta, "runs": runs}


def check_writable(path: Path) -> None:
    """Raise OSError now, before anything is spawned, if path cannot be written later.

    Tries a real file in the target folder: permission bits say nothing for root or on /proc.
    """
    if path.is_dir():
        raise OSError(f"{path} is a folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise OSError(f"{path} is not writable")
    folder = path.resolve().parent
    if not folder.is_dir():
        raise OSError(f"folder {folder} does not exist")
    with tempfile.NamedTemporaryFile(prefix=f".{path.name}.", dir=folder):
        pass


def write_atomic(path: Path, document: dict) -> None:
    """Write beside the target, then rename: a reader sees the old file or the whole new one."""
    folder = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary name only
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main_argv() -> list[str]:
    return [Path(sys.argv[0]).name, *sys.argv[1:]]

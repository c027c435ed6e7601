"""Real servers nobody here wrote, for the server checks' tests: installed once, cached, reused.

mcp-server-time and mcp-server-git come from the package index into a virtual environment of
their own (never the probe's), made with the pinned uv; so does each server of the server table
(TABLE_PYTHON: one environment each, their pins differ). The npm servers (NPM_SERVERS: the
reference TypeScript servers, the TypeScript SDK, and the Go and Rust binaries npm ships) come
from npm into a folder of their own, where node and npm exist. Both live under SERVERS_CACHE,
named by a hash of what defines them, with a lock per folder (parallel test sessions) and a
marker (servers.json) written last: a folder without it, or with another list, is rebuilt, and a
failed build leaves nothing behind. Also here: the inputs of the large calls, a generated git
repository (git_log) and a large text file (read_text_file).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from stdio_probe.sdk.envs import CACHEDIR_TAG, base_python

SERVERS_CACHE = Path(os.environ.get("STDIO_PROBE_SERVERS", Path.home() / ".cache" / "stdio-probe" / "servers"))
PYTHON_SERVERS = ["mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19"]
TABLE_PYTHON = {  # the server table's Python servers and SDKs: label -> pinned requirements
    "mcp-server-fetch": ["mcp-server-fetch==2026.10.24"],
    "mcp-server-sqlite": ["mcp-server-sqlite==2025.4.25", "mcp==1.30.0"],  # it uses mcp 1.x's API, pins none
    "fastmcp": ["fastmcp==4.2.3"],
    "python-sdk": ["mcp==2.3.0"],
}
NPM_SERVERS = [
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
    "@modelcontextprotocol/server-sequential-thinking@2026.8.31",
    "@modelcontextprotocol/sdk@1.32.2",
    "mcp-time-linux-x64@0.4.0",  # Go (mcp-go), a prebuilt binary
    "mcp-cron-linux-amd64@0.9.1",  # Go (go-sdk), a prebuilt binary
    "@leanspec/mcp-linux-x64@0.3.0",  # Rust, a prebuilt binary
]
MARKER = "servers.json"
INSTALL_TIMEOUT = 600
LOG_COMMITS = 1500  # git_log of them all: an answer of about 317 KB, five pipes' worth
TEXT_FILE_BYTES = 540_000
AUTHOR = "Probe Test <probe@example.com>"
MESSAGE = "a one-line commit message of about the length that a real project's commits have"


class Unavailable(Exception):
    """What the tests need cannot be had on this host (the reason is a skip's)."""


def python_servers() -> Path:
    """The bin folder of the environment with PYTHON_SERVERS (made on first use)."""
    return python_env(PYTHON_SERVERS, programs=[_program(r) for r in PYTHON_SERVERS])


# bytecode compiled at install: else the first run after it compiles the package in every process it starts side by
# side (a host's 13 arms: openai-agents took 49 s of CPU in its first run, 36 s in later ones)
COMPILE = "--compile-bytecode"


def python_env(
    requirements: list[str], programs: list[str] | None = None, base: str | None = None, cache: Path = SERVERS_CACHE
) -> Path:
    """The bin folder of an environment with requirements under cache (made on first use), on base (this
    machine's base_python by default); complete when programs exist."""
    base = base or os.path.realpath(base_python())
    folder = _folder("python", [*requirements, base], cache)

    def build() -> None:
        uv = _uv()
        # an interpreter of this machine's (uv would fetch one from a host outside the registries)
        _run([uv, "venv", "--quiet", "--no-python-downloads", "--python", base, str(folder)])
        _run([uv, "pip", "install", "--quiet", COMPILE, "--python", str(folder / "bin" / "python"), *requirements])

    wanted = programs or ["python"]
    _ensure(folder, requirements, build, lambda: all((folder / "bin" / p).exists() for p in wanted))
    return folder / "bin"


def npm_servers() -> Path:
    """The node_modules folder with NPM_SERVERS (made on first use); Unavailable without node and npm."""
    return npm_prefix(NPM_SERVERS, Path("@modelcontextprotocol"))


def npm_prefix(packages: list[str], made: Path, cache: Path = SERVERS_CACHE) -> Path:
    """The node_modules folder with packages under cache (made on first use; complete once made, a path in it,
    exists); Unavailable without node and npm."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise Unavailable(f"node and npm are needed for {', '.join(packages)}")
    folder = _folder("npm", packages, cache)

    def build() -> None:
        folder.mkdir(parents=True)
        _run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), *packages])

    _ensure(folder, packages, build, lambda: (folder / "node_modules" / made).exists())
    return folder / "node_modules"


def filesystem_server(root: Path) -> str:
    """The command line of the filesystem server serving root (node runs its entry point: no shell, no npx)."""
    entry = npm_servers() / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return f"{shutil.which('node')} {entry} {root}"


def git_repo(path: Path, commits: int = LOG_COMMITS) -> Path:
    """A git repository of commits commits, one file changed in each, made in one git fast-import."""
    git = shutil.which("git")
    if git is None:
        raise Unavailable("git is needed for mcp-server-git's repository")
    _run([git, "init", "--quiet", "--initial-branch", "main", str(path)])
    stream = []
    for n in range(1, commits + 1):
        data = f"line {n}\n"
        message = f"change {n}: {MESSAGE}"
        parent = "" if n == 1 else f"from :{n - 1}\n"
        stream.append(
            f"commit refs/heads/main\nmark :{n}\ncommitter {AUTHOR} {1_700_000_000 + n} +0000\n"
            f"data {len(message)}\n{message}\n{parent}M 100644 inline file.txt\ndata {len(data)}\n{data}\n"
        )
    _run([git, "-C", str(path), "fast-import", "--quiet"], stdin="".join(stream))
    _run([git, "-C", str(path), "checkout", "--quiet", "main"])
    return path


def text_file(path: Path, size: int = TEXT_FILE_BYTES) -> Path:
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"
    path.write_text(line * (size // len(line) + 1))
    return path


def _folder(kind: str, identity: list[str], cache: Path = SERVERS_CACHE) -> Path:
    return cache / f"{kind}-{hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:12]}"


def _ensure(folder: Path, wanted: list[str], build: Callable[[], None], complete: Callable[[], bool]) -> None:
    """Reuse folder when its marker lists wanted and it is complete; else build it afresh, under its lock."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tag = folder.parent / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(CACHEDIR_TAG)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if json.loads((folder / MARKER).read_text()) == wanted and complete():
                return
        except (OSError, ValueError):
            pass
        shutil.rmtree(folder, ignore_errors=True)
        try:
            build()
            (folder / MARKER).write_text(json.dumps(wanted))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise


def _program(requirement: str) -> str:
    return requirement.split("==")[0]


def _uv() -> str:
    try:
        import uv
    except ImportError:
        raise Unavailable("uv (requirements-dev.txt pins it) is needed to install the Python servers") from None
    return uv.find_uv_bin()


def _run(command: list[str], stdin: str | None = None) -> None:
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    if done.returncode != 0:
        what = " ".join([Path(command[0]).name, *command[1:3]])
        raise RuntimeError(f"{what}: exit {done.returncode}: {done.stderr[-800:]}")


if __name__ == "__main__":  # make the caches ahead of a test session: python -m tests.third_party
    print(python_servers(), file=sys.stderr)
    for requirements in TABLE_PYTHON.values():
        print(python_env(requirements), file=sys.stderr)
    print(npm_servers(), file=sys.stderr)

"""SDK environments: one virtual environment per SDK source, created once and reused while valid.

An environment is named by a hash of what defines it (the source and the base
interpreter), as pyperformance names its venvs. Reuse is verified, as nox
does: the environment's interpreter must run and be the base interpreter's
version, the installed mcp must be the one asked for, and the marker written
last by a complete creation must be there. Anything else is rebuilt. A
creation that fails, or is interrupted, removes its folder. A local source (a
tree or a wheel) whose content hash changed is reinstalled in place, so one
environment serves every step of a git bisection.

Environments are made with uv when it is on PATH, otherwise with venv and pip.
The cache folder is $XDG_CACHE_HOME/stdio-probe/envs (~/.cache/... by default),
marked with CACHEDIR.TAG so backup tools skip it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from stdio_probe.facts import SdkError, read_facts

MARKER = "probe-env.json"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by stdio-probe.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
INSTALL_TIMEOUT = 600
# Never part of a source tree's identity: VCS data, build and tool output.
_SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}


@dataclass(frozen=True)
class Source:
    """What to install: mcp==version from PyPI ("pypi"), or a local tree or wheel ("path")."""

    kind: str
    target: str  # a version for pypi, an absolute path for path

    @property
    def requirement(self) -> str:
        return f"mcp=={self.target}" if self.kind == "pypi" else self.target


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "stdio-probe" / "envs"


def base_python() -> str:
    """The interpreter environments are made from: the one under this probe's own venv, if any."""
    return getattr(sys, "_base_executable", None) or sys.executable


def content_hash(path: Path) -> str:
    """sha256 of a wheel's bytes, or of a tree's file names and contents (VCS and build output left out)."""
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(path.read_bytes())
        return digest.hexdigest()
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d in _SKIP_DIRS or d.endswith(".egg-info")))
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            file = Path(folder, name)
            digest.update(str(file.relative_to(path)).encode() + b"\0")
            digest.update(file.read_bytes() if not file.is_symlink() else os.readlink(file).encode())
            digest.update(b"\0")
    return digest.hexdigest()


class _Tool:
    """The commands that build an environment: uv when on PATH, else the venv module and pip.

    Without uv, the environment gets no pip of its own (ensurepip costs seconds per environment):
    this probe's pip installs into it through pip's --python option.
    """

    def __init__(self) -> None:
        self.uv = shutil.which("uv")
        self.name = "uv" if self.uv else "pip"

    def create(self, folder: Path, python: str) -> list[str]:
        if self.uv:
            return [self.uv, "venv", "--quiet", "--python", python, str(folder)]
        return [python, "-m", "venv", "--without-pip", str(folder)]

    def pip(self, env_python: Path, command: str, *args: str) -> list[str]:
        if self.uv:
            return [self.uv, "pip", command, "--quiet", "--python", str(env_python), *args]
        return [sys.executable, "-m", "pip", "--python", str(env_python), command, "--quiet", *args]


def ensure(source: Source, cache: Path) -> tuple[str, dict]:
    """The python of a valid environment for source (made or repaired as needed), and its facts.

    The facts are read_facts' from inside the environment, with env_tool and content_hash added.

    An exclusive lock per environment keeps two probes sharing the cache from building it at once.
    """
    tool, base = _Tool(), base_python()
    _prepare_cache(cache)
    folder = cache / _name(source, base, tool.name)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_locked(source, folder, tool, base)


def _ensure_locked(source: Source, folder: Path, tool: _Tool, base: str) -> tuple[str, dict]:
    base_version = platform.python_version()
    python = folder / "bin" / "python"
    wanted_hash = content_hash(Path(source.target)) if source.kind == "path" else None
    marker = _read_marker(folder)
    facts = _reusable(python, marker, base_version, tool.name)
    if facts is None:
        shutil.rmtree(folder, ignore_errors=True)
        _build(folder, tool, base, source)
    elif marker.get("content_hash") == wanted_hash:
        return str(python), _with_env_facts(facts, marker)
    else:  # a local source that changed: replace mcp, keep the rest
        _run(tool.pip(python, "uninstall", *(["--yes"] if tool.name == "pip" else []), "mcp"), source)
        _run(tool.pip(python, "install", source.requirement), source)
    facts = read_facts(str(python), {})
    marker = {"source": source.kind, "target": source.target, "tool": tool.name, "base_python": base}
    marker |= {"python": base_version, "mcp": facts["version"], "content_hash": wanted_hash}
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    return str(python), _with_env_facts(facts, marker)


def _with_env_facts(facts: dict, marker: dict) -> dict:
    return facts | {"env_tool": marker["tool"], "content_hash": marker.get("content_hash")}


def _name(source: Source, base: str, tool: str) -> str:
    identity = json.dumps([source.kind, source.target, os.path.realpath(base), tool])
    label = f"mcp-{source.target}" if source.kind == "pypi" else f"path-{Path(source.target).name}"
    return f"{label}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"


def _prepare_cache(cache: Path) -> None:
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tag = cache / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(CACHEDIR_TAG)
    except OSError as exc:
        raise SdkError(f"cannot use environment folder {cache}: {exc}") from None


def _read_marker(folder: Path) -> dict:
    try:
        return json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return {}


def _reusable(python: Path, marker: dict, base_version: str, tool: str) -> dict | None:
    """Verified reuse: a complete creation by this tool, whose interpreter runs, is the base's version, and
    still has the mcp version it was given. Returns the facts read to verify it, or None."""
    if not marker or marker.get("tool") != tool or marker.get("python") != base_version:
        return None
    try:
        facts = read_facts(str(python), {})
    except SdkError:
        return None  # broken interpreter or mcp gone
    return facts if facts["python"] == base_version and facts["version"] == marker.get("mcp") else None


def _build(folder: Path, tool: _Tool, base: str, source: Source) -> None:
    """Create and install; on any failure (or interruption) nothing is left behind."""
    try:
        _run(tool.create(folder, base), source)
        _run(tool.pip(folder / "bin" / "python", "install", source.requirement), source)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _run(command: list[str], source: Source) -> None:
    """Run an environment command; its failure is one line naming the source and the tool's last complaint."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SdkError(f"{source.requirement}: {Path(command[0]).name} failed: {exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        complaint = next((line for line in reversed(lines) if line.lower().startswith(("error", "×"))), None)
        complaint = complaint or (lines[-1] if lines else f"exit {done.returncode}")
        raise SdkError(f"cannot install {source.requirement}: {complaint}")

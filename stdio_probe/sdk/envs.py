"""SDK environments: one virtual environment per SDK source, created once and reused while valid.

An environment is named by a hash of what defines it (the source, the base
interpreter, the tool and, for a release, its cut-off), as pyperformance names
its venvs. Reuse is verified, as nox does: the environment's interpreter must
run and be the base interpreter's version, the installed mcp must be the one
asked for, and the marker written last by a complete creation must be there
and match. Anything else is rebuilt. A creation that fails, or is interrupted,
removes its folder. A local source (a tree or a wheel) whose content hash
changed is rebuilt from scratch in the same folder, so each step of a git
bisection has exactly what it installed; a tree's own workspace packages that
mcp depends on (src/mcp-types after the types split) are installed with it.

Environments are made with uv (a pinned dependency of the probe) resolving
nothing newer than the source's cut-off (--exclude-newer: a release's upload
time, a git tree's commit date), so a release gets the dependencies of its
day; the fallback, venv and pip, has no cut-off. When made, the environment's
SDK is imported once (IMPORT_CHECK): one that cannot import is an SdkError.
The cache folder is $XDG_CACHE_HOME/stdio-probe/envs (~/.cache/... by default),
marked with CACHEDIR.TAG so backup tools skip it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from stdio_probe.core.host_contract import Pidfd
from stdio_probe.sdk.facts import SdkError, read_facts

MARKER = "probe-env.json"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by stdio-probe.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
INSTALL_TIMEOUT = 600
IMPORT_TIMEOUT = 60.0
KILL_WAIT = 1.0  # seconds to read a killed command's pipes to their end (a child of its that left may hold them)
# what every case needs of an SDK: its stdio client and server (imported once, when the environment is made)
IMPORT_CHECK = "import mcp, mcp.client.stdio, mcp.server.stdio"
# Never part of a source tree's identity: VCS data, build and tool output.
_SKIP_DIRS = {"__pycache__", "build", "dist", "node_modules"}


@dataclass(frozen=True)
class Source:
    """What to install: mcp==version from PyPI ("pypi"), or a local tree or wheel ("path")."""

    kind: str
    target: str  # a version for pypi, an absolute path for path
    exclude_newer: str | None = None  # resolve nothing uploaded after this instant (ISO 8601, UTC)
    basis: str | None = None  # what the cut-off is: "release_upload" (pypi) or "commit_date" (a git tree)
    commit: str | None = None  # path only: install this commit of the checkout at target (a worktree), not the tree

    @property
    def requirement(self) -> str:
        return f"mcp=={self.target}" if self.kind == "pypi" else self.target


def probe_cache() -> Path:
    """The probe's cache folder: $XDG_CACHE_HOME/stdio-probe (~/.cache/stdio-probe by default), the SDK
    environments in its envs/ (and, by default, the tests' real servers and hosts in its servers/ and hosts/)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "stdio-probe"


def default_cache() -> Path:
    return probe_cache() / "envs"


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
    """The commands that build an environment: uv (a pinned dependency of the probe), else venv and pip.

    uv is found with uv.find_uv_bin() (the uv package installs its binary beside this interpreter, not
    necessarily on PATH), then on PATH. STDIO_PROBE_ENV_TOOL=pip forces the fallback: venv and pip.
    Only uv can resolve as of a date (--exclude-newer); pip's environments record no cut-off.
    Without uv, the environment gets no pip of its own (ensurepip costs seconds per environment):
    this probe's pip installs into it through pip's --python option.
    """

    def __init__(self) -> None:
        self.uv = None if os.environ.get("STDIO_PROBE_ENV_TOOL") == "pip" else find_uv()
        self.name = "uv" if self.uv else "pip"

    def create(self, folder: Path, python: str) -> list[str]:
        if self.uv:
            return [self.uv, "venv", "--quiet", "--python", python, str(folder)]
        return [python, "-m", "venv", "--without-pip", str(folder)]

    def install(self, env_python: Path, requirements: list[str], exclude_newer: str | None) -> list[str]:
        if self.uv:
            cutoff = ["--exclude-newer", exclude_newer] if exclude_newer else []
            # bytecode compiled now: an interpreter that may not write it (PYTHONDONTWRITEBYTECODE) would compile
            # the SDK's sources at every start, and every fork server, fixture and driver starts one
            install = [self.uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(env_python)]
            return [*install, *cutoff, *requirements]
        return [sys.executable, "-m", "pip", "--python", str(env_python), "install", "--quiet", *requirements]


@functools.cache
def find_uv() -> str | None:
    """The uv binary of the uv package this probe depends on, else uv on PATH, else None.

    Found once, under a lock: uv.find_uv_bin reads sysconfig, whose first read is not thread-safe
    (environments are prepared in threads).
    """
    with _find_lock:
        try:
            import uv

            return uv.find_uv_bin()
        except (ImportError, FileNotFoundError):
            return shutil.which("uv")


_find_lock = threading.Lock()


def ensure(source: Source, cache: Path) -> tuple[str, dict]:
    """The python of a valid environment for source (made or rebuilt as needed), and its facts.

    The facts are read_facts' from inside the environment, with what made it added (env_tool,
    content_hash, exclude_newer and its basis, installed). An SDK that cannot be imported there is
    an SdkError naming the import error.

    An exclusive lock per environment keeps two probes sharing the cache from building it at once.
    """
    tool, base = _Tool(), base_python()
    _prepare_cache(cache)
    exclude_newer = source.exclude_newer if tool.uv else None
    folder = cache / _name(source, base, tool.name, exclude_newer)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python, facts, marker = _ensure_locked(source, folder, tool, base, exclude_newer)
    if marker["import_error"]:
        raise SdkError(f"mcp {facts['version']} ({source.requirement}) cannot be imported: {marker['import_error']}")
    return python, facts


def _ensure_locked(
    source: Source, folder: Path, tool: _Tool, base: str, exclude_newer: str | None
) -> tuple[str, dict, dict]:
    python = folder / "bin" / "python"
    wanted = {"tool": tool.name, "python": platform.python_version(), "exclude_newer": exclude_newer}
    if source.commit:  # a commit's content is the commit: no hash of a tree that may not exist yet
        wanted["content_hash"] = f"git:{source.commit}"
    else:
        wanted["content_hash"] = content_hash(Path(source.target)) if source.kind == "path" else None
    marker = _read_marker(folder)
    facts = _reusable(python, marker, wanted)
    reused = facts is not None
    if facts is None:  # new, broken, or a local source whose content changed: a fresh environment
        remove(folder, source)
        started, created_at = time.monotonic(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:  # made, installed, read and import-checked, or nothing left (a stop in the import check included)
            installed = _build(folder, tool, base, _worktree(folder, source), exclude_newer)
            facts = read_facts(str(python), {})
            marker = {"source": source.kind, "target": source.target, "base_python": base, **wanted}
            marker |= {"mcp": facts["version"], "exclude_newer_basis": source.basis if exclude_newer else None}
            marker |= {"installed": installed, "import_error": import_error(str(python)), "bytecode": True}
            marker["created_s"] = round(time.monotonic() - started, 3)
            marker["created_at"] = created_at
            (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        except BaseException:
            remove(folder, source)  # a commit's worktree goes with its environment
            raise
    elif "import_error" not in marker or "bytecode" not in marker:  # made before these existed: once, remember
        if "import_error" not in marker:
            marker["import_error"] = import_error(str(python))
        marker["bytecode"] = compile_bytecode(str(python), folder)
        (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
    return str(python), _with_env_facts(facts, marker, reused), marker


def _with_env_facts(facts: dict, marker: dict, reused: bool) -> dict:
    """What made the environment; on reuse, env_created_s and env_created_at are the original build's."""
    made = {"env_tool": marker["tool"], "content_hash": marker.get("content_hash")}
    made |= {"exclude_newer": marker.get("exclude_newer"), "exclude_newer_basis": marker.get("exclude_newer_basis")}
    made |= {"env_created_s": marker.get("created_s"), "env_created_at": marker.get("created_at")}
    made |= {"env_reused": reused}
    return facts | made | ({"installed": marker["installed"]} if "installed" in marker else {})


def worktree_folder(folder: Path) -> Path:
    """Where a commit source's worktree lives: beside its environment, named after it."""
    return folder.with_name(folder.name + ".src")


def _worktree(folder: Path, source: Source) -> Source:
    """The source to install: itself, or for a commit of a checkout a detached git worktree of it at that commit
    (the checkout's own work tree is never touched)."""
    if not source.commit:
        return source
    tree = worktree_folder(folder)
    command = ["git", "-C", source.target, "worktree", "add", "--detach", "--force", str(tree), source.commit]
    _run(command, source)
    return Source("path", str(tree), source.exclude_newer, source.basis)


def remove(folder: Path, source: Source) -> None:
    """Remove an environment, and with it a commit source's worktree (unregistered from its checkout)."""
    shutil.rmtree(folder, ignore_errors=True)
    if source.commit:
        tree = worktree_folder(folder)
        shutil.rmtree(tree, ignore_errors=True)
        subprocess.run(["git", "-C", source.target, "worktree", "prune"], capture_output=True, timeout=60)


def _name(source: Source, base: str, tool: str, exclude_newer: str | None) -> str:
    """A pypi release's environment is named by its cut-off too; a local source's by its path alone
    (every bisection step rebuilds the same folder)."""
    identity = [source.kind, source.target, os.path.realpath(base), tool]
    if exclude_newer and source.kind == "pypi":
        identity += ["exclude-newer", exclude_newer]
    identity += [source.commit] if source.commit else []  # a checkout's commit: an environment per commit
    label = f"mcp-{source.target}" if source.kind == "pypi" else f"path-{Path(source.target).name}"
    label += f"-{source.commit[:12]}" if source.commit else ""
    return f"{label}-{hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:12]}"


def workspace_members(tree: Path) -> list[Path]:
    """The tree's own workspace packages that mcp depends on (after the types split: src/mcp-types).

    Members come from [tool.uv.workspace].members (globs); mcp's dependencies from
    [project].dependencies and, for dynamic ones, the hatch metadata hooks' dependencies.
    """
    try:
        project = tomllib.loads((tree / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return []
    requirements = list(project.get("project", {}).get("dependencies", []))
    for hook in project.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}).values():
        requirements += hook.get("dependencies", []) if isinstance(hook, dict) else []
    needed = {_normalized(re.split(r"[\s<>=!~;\[(@]", r.strip(), maxsplit=1)[0]) for r in requirements}
    members = []
    for pattern in project.get("tool", {}).get("uv", {}).get("workspace", {}).get("members", []):
        for member in sorted(tree.glob(pattern)):
            try:
                name = tomllib.loads((member / "pyproject.toml").read_text())["project"]["name"]
            except (OSError, KeyError, tomllib.TOMLDecodeError):
                continue
            if _normalized(name) in needed and member not in members:
                members.append(member)
    return members


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def import_error(python: str) -> str | None:
    """None when the SDK's stdio client and server import in python; else the import error, one line."""
    try:
        done = _command([python, "-c", IMPORT_CHECK], IMPORT_TIMEOUT, _clean_env())
    except subprocess.TimeoutExpired:
        return f"importing mcp took over {IMPORT_TIMEOUT:.0f} s"
    except OSError as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {done.returncode}"


def compile_bytecode(python: str, folder: Path) -> bool:
    """Compile what the environment installed (its lib folder), as the install now does; whether it worked."""
    try:
        done = _command([python, "-m", "compileall", "-q", str(folder / "lib")], INSTALL_TIMEOUT, _clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


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


def _reusable(python: Path, marker: dict, wanted: dict) -> dict | None:
    """Verified reuse: a complete creation by this tool, for this interpreter version, cut-off and content,
    whose interpreter runs and still has the mcp it was given. Returns the facts read to verify it, or None."""
    if not marker or any(marker.get(key) != value for key, value in wanted.items()):
        return None
    try:
        facts = read_facts(str(python), {})
    except SdkError:
        return None  # broken interpreter or mcp gone
    return facts if facts["python"] == wanted["python"] and facts["version"] == marker.get("mcp") else None


def install_requirements(source: Source) -> list[str]:
    """What one install command gets: mcp==version, the wheel, or the tree with its own workspace packages."""
    if source.kind == "path" and Path(source.target).is_dir():
        return [source.target, *(str(member) for member in workspace_members(Path(source.target)))]
    return [source.requirement]


def _build(folder: Path, tool: _Tool, base: str, source: Source, exclude_newer: str | None) -> list[str]:
    """Create and install (one command, so the resolver sees everything at once); what it installed. Its caller
    removes what a failure (or an interruption) leaves."""
    requirements = install_requirements(source)
    _run(tool.create(folder, base), source)
    _run(tool.install(folder / "bin" / "python", requirements, exclude_newer), source)
    return requirements


_running: dict[subprocess.Popen, Pidfd | None] = {}  # each with its pidfd: its group is signalled through it
_running_lock = threading.Lock()
_stopped = threading.Event()  # stop_all was called: the run is being cut short, and no command starts after it


def allow_commands() -> None:
    """Environment commands may start again (a new preparation in this process, after one that was stopped)."""
    _stopped.clear()


def stop_all() -> None:
    """Kill every environment command still running (environments are prepared in threads), and its group; refuse
    every later one, so a thread that goes on to its next step (the install after the venv, the import check)
    starts nothing."""
    with _running_lock:
        _stopped.set()
        for pidfd in _running.values():
            if pidfd is not None:
                pidfd.signal_group(signal.SIGKILL)


def _kill_group(pidfd: Pidfd | None) -> None:
    if pidfd is not None:
        pidfd.signal_group(signal.SIGKILL)


def _command(command: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run an environment command in a session of its own (so stop_all reaches its children), killed with its
    group past timeout (subprocess.TimeoutExpired) or on any exception; SdkError once stop_all was called."""
    with _running_lock:  # started under the lock: stop_all either refuses it or kills it
        if _stopped.is_set():
            raise SdkError(f"{Path(command[0]).name} not started: the run is being cut short")
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",  # a tool's output that is not UTF-8 is still its complaint
            start_new_session=True,
            env=env,
        )
        pidfd = Pidfd.open(process.pid)  # our child, not waited for: its pid and group are its own
        _running[process] = pidfd
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:
        _kill_group(pidfd)
        with contextlib.suppress(subprocess.TimeoutExpired):  # its pipes end, unless a child that left holds them
            process.communicate(timeout=KILL_WAIT)
        raise
    finally:
        with _running_lock:
            _running.pop(process, None)
        if pidfd is not None:
            pidfd.close()
    if _stopped.is_set():  # killed by stop_all, most likely: its exit is no finding (an import error "exit -9")
        raise SdkError(f"{Path(command[0]).name} cut short: the run is being stopped")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _run(command: list[str], source: Source) -> None:
    """An environment command (_command), bounded by INSTALL_TIMEOUT; its failure is one line naming the source
    and the tool's last complaint."""
    tool = Path(command[0]).name
    try:
        done = _command(command, INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SdkError(f"cannot install {source.requirement}: {tool} took over {INSTALL_TIMEOUT} s") from None
    except OSError as exc:
        raise SdkError(f"{source.requirement}: {tool} failed: {exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        complaint = next((line for line in reversed(lines) if line.lower().startswith(("error", "×"))), None)
        complaint = complaint or (lines[-1] if lines else f"exit {done.returncode}")
        raise SdkError(f"cannot install {source.requirement}: {complaint}")

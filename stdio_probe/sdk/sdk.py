"""Resolve the SDKs under test into interpreters and the facts read from inside them.

An SDK comes from one of three sources: "pypi" (--sdk 2.3.0 or v2.3.0), "path" (--sdk
a python-sdk checkout or an mcp wheel; PATH@REF a commit of a checkout, installed from a git
worktree of it made beside its environment), or "interpreter" (--python, or by
default this probe's own interpreter with the project's pinned mcp). The
first two get an environment of their own (stdio_probe.sdk.envs).

--sdk also takes ranges, resolved from the package index's release list
(stdio_probe.sdk.index): "all" (every final release), oldest first and PEP 440 specifiers
(">=1.20,<2": one entry, commas and all). Pre-releases come only when a
specifier names one (PEP 440's rule, as pip applies it); yanked releases never.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stdio_probe.core.model import Sdk
from stdio_probe.sdk import envs, index
from stdio_probe.sdk.facts import SdkError, read_facts

_VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")
_SPECIFIER = re.compile(r"(~=|==|!=|<=|>=|<|>)")
ALL = "all"
# The probe's interpreter holds the probe's packages beside the pinned mcp; rich among them would change what the
# SDK does (its logging), so the fixtures that run in it find a failing rich first (fixtures/bare_sdk/rich).
BARE_SDK = Path(__file__).resolve().parents[1] / "fixtures" / "bare_sdk"


@dataclass(frozen=True)
class Request:
    """One SDK the user asked for: the spec as given, its source, and the version, path or interpreter."""

    spec: str
    source: str
    target: str
    commit: str | None = None  # PATH@REF: the commit REF names in the checkout at target


PINNED = Request("pinned", "interpreter", sys.executable)  # no --sdk, no --python: this interpreter's mcp


def requests(sdk_arg: str | None, python_arg: str | None, cache_dir: Path | None = None) -> list[Request]:
    """What --sdk and --python ask for, checked without running anything but a read of the release list
    (for ranges); none means the pinned mcp."""
    entries = split_entries(sdk_arg or "")
    if sdk_arg is not None and not entries:
        raise SdkError("--sdk names no SDK")
    if len(set(entries)) < len(entries):
        raise SdkError("an SDK is named twice")
    found: list[Request] = []
    for entry in entries:
        for request in _expand(entry, cache_dir or envs.default_cache()):
            if request not in found:
                found.append(request)
    if python_arg is not None:
        if not (os.path.isfile(python_arg) and os.access(python_arg, os.X_OK)):
            raise SdkError(f"--python {python_arg}: not an executable file")
        found.append(Request(python_arg, "interpreter", python_arg))
    if len({r.spec for r in found}) < len(found):
        raise SdkError("an SDK is named twice")
    return found or [PINNED]


def split_entries(sdk_arg: str) -> list[str]:
    """--sdk's comma-separated entries, a specifier's own commas kept: ">=1.20,<2,2.3.0" is two entries."""
    entries: list[str] = []
    for part in (p.strip() for p in sdk_arg.split(",")):
        if not part:
            continue
        if entries and _SPECIFIER.match(part) and _SPECIFIER.match(entries[-1]):
            entries[-1] += f",{part}"
        else:
            entries.append(part)
    return entries


def _expand(entry: str, cache_dir: Path) -> list[Request]:
    """One entry's SDKs: itself, or the releases a range selects, oldest first."""
    if entry != ALL and not _SPECIFIER.match(entry):
        return [_request(entry)]
    try:
        wanted = SpecifierSet("" if entry == ALL else entry)
    except InvalidSpecifier:
        raise SdkError(f"--sdk {entry}: not a PEP 440 version specifier (e.g. '>=1.20,<2')") from None
    offered = sorted((r.version for r in index.releases(cache_dir) if not r.yanked), key=Version)
    chosen = set(wanted.filter(offered, prereleases=None if entry != ALL else False))
    if not chosen:
        raise SdkError(f"--sdk {entry}: no release of mcp on the index matches")
    return [Request(version, "pypi", version) for version in offered if version in chosen]


def _request(spec: str) -> Request:
    """A version (a tag's v prefix allowed: v2.0.0 is 2.0.0), a path, or PATH@REF (a ref of a git checkout)."""
    path = Path(spec).expanduser()
    if path.exists():
        _check_is_sdk(path)
        return Request(spec, "path", str(path.resolve()))
    if _VERSION.fullmatch(spec.removeprefix("v")):
        return Request(spec, "pypi", spec.removeprefix("v"))
    tree, at, ref = spec.rpartition("@")
    if at and tree and Path(tree).expanduser().is_dir():
        checkout = Path(tree).expanduser().resolve()
        commit = _git(checkout, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if commit is None:
            raise SdkError(f"--sdk {spec}: {ref!r} names no commit in the git checkout {checkout}")
        return Request(spec, "path", str(checkout), commit)
    raise SdkError(f"--sdk {spec}: neither an mcp version, an existing path, nor PATH@REF of a git checkout")


def _check_is_sdk(path: Path) -> None:
    """A local SDK is an mcp wheel or a source tree whose pyproject.toml names the project mcp."""
    if path.is_file():
        if not (path.suffix == ".whl" and path.name.split("-")[0] == "mcp"):
            raise SdkError(f"--sdk {path}: not an mcp wheel (mcp-*.whl)")
        return
    try:
        name = tomllib.loads((path / "pyproject.toml").read_text()).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SdkError(f"--sdk {path}: not an SDK source tree (pyproject.toml: {exc})") from None
    if name != "mcp":
        raise SdkError(f"--sdk {path}: not an SDK source tree (its project is {name!r}, not 'mcp')")


def resolve(request: Request, env_dir: Path) -> Sdk:
    """An Sdk for a request: its environment made or reused when it needs one, its facts read from inside."""
    if request == PINNED:
        return pinned()
    if request.source == "interpreter":
        python, facts = request.target, read_facts(request.target, {})
    else:
        python, facts = envs.ensure(source_of(request, env_dir), env_dir)
        if request.commit:
            facts |= {"commit": request.commit}
        elif request.source == "path":
            facts |= tree_commit(Path(request.target))
    return Sdk(spec=request.spec, python=python, facts=facts | {"source": request.source})


def source_of(request: Request, env_dir: Path) -> envs.Source:
    """What to install for a pypi or path request, with its cut-off: a release's upload time on the index,
    a git tree's commit date (a wheel has none)."""
    if request.source == "pypi":
        found = index.release(request.target, env_dir)
        if found is None:
            raise SdkError(f"cannot install mcp=={request.target}: no such release of mcp on the package index")
        return envs.Source("pypi", request.target, found.cutoff, "release_upload")
    at = [request.commit] if request.commit else []
    date = _git(Path(request.target), "log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", *at)
    return envs.Source("path", request.target, date, "commit_date" if date else None, request.commit)


def tree_commit(path: Path) -> dict:
    """A git tree's HEAD commit (sdk.commit in results.json), or nothing for a wheel or a tree outside git."""
    commit = _git(path, "rev-parse", "HEAD") if path.is_dir() else None
    return {"commit": commit} if commit else {}


def _git(tree: Path, *args: str) -> str | None:
    if not tree.is_dir():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(tree), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "TZ": "UTC"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def pinned(env: dict[str, str] | None = None, spec: str = "pinned") -> Sdk:
    """This interpreter, with the project's pinned mcp (or what env puts in front of it), seen by its fixtures
    without the probe's own packages (BARE_SDK)."""
    env = env or {}
    env = env | {"PYTHONPATH": os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(BARE_SDK)]))}
    facts = read_facts(sys.executable, env) | {"source": "interpreter"}
    return Sdk(spec=spec, python=sys.executable, env=env, facts=facts)

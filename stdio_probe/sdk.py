"""Resolve the SDKs under test into interpreters and the facts read from inside them.

An SDK comes from one of three sources: "pypi" (--sdk 2.3.0), "path" (--sdk
a python-sdk checkout or an mcp wheel), or "interpreter" (--python, or by
default this probe's own interpreter with the project's pinned mcp). The
first two get an environment of their own (stdio_probe.envs).
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from stdio_probe import envs
from stdio_probe.facts import SdkError, read_facts
from stdio_probe.model import Sdk

_VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")


@dataclass(frozen=True)
class Request:
    """One SDK the user asked for: the spec as given, its source, and the version, path or interpreter."""

    spec: str
    source: str
    target: str


def requests(sdk_arg: str | None, python_arg: str | None) -> list[Request]:
    """What --sdk and --python ask for, checked without running anything; none means the pinned mcp."""
    found = [_request(part.strip()) for part in (sdk_arg or "").split(",") if part.strip()]
    if sdk_arg is not None and not found:
        raise SdkError("--sdk names no SDK")
    if python_arg is not None:
        if not (os.path.isfile(python_arg) and os.access(python_arg, os.X_OK)):
            raise SdkError(f"--python {python_arg}: not an executable file")
        found.append(Request(python_arg, "interpreter", python_arg))
    if len({r.spec for r in found}) < len(found):
        raise SdkError("an SDK is named twice")
    return found or [Request("pinned", "interpreter", sys.executable)]


def _request(spec: str) -> Request:
    path = Path(spec).expanduser()
    if path.exists():
        _check_is_sdk(path)
        return Request(spec, "path", str(path.resolve()))
    if _VERSION.fullmatch(spec):
        return Request(spec, "pypi", spec)
    raise SdkError(f"--sdk {spec}: neither an mcp version nor an existing path")


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
    if request.source == "interpreter":
        python, facts = request.target, read_facts(request.target, {})
    else:
        python, facts = envs.ensure(envs.Source(request.source, request.target), env_dir)
    return Sdk(spec=request.spec, python=python, facts=facts | {"source": request.source})


def pinned(env: dict[str, str] | None = None, spec: str = "pinned") -> Sdk:
    """This interpreter, with the project's pinned mcp (or what env puts in front of it)."""
    env = env or {}
    facts = read_facts(sys.executable, env) | {"source": "interpreter"}
    return Sdk(spec=spec, python=sys.executable, env=env, facts=facts)

"""Resolve an SDK under test into an interpreter and the facts read from inside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from stdio_probe.model import Sdk
from stdio_probe.spawn import FIXTURES


class SdkError(Exception):
    """The SDK cannot be used: the message is one line for the user."""


def read_facts(python: str, env: dict[str, str]) -> dict:
    """Run fixtures/sdk_facts.py in the interpreter; fail when it has no mcp."""
    try:
        out = subprocess.run(
            [python, str(FIXTURES / "sdk_facts.py")],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SdkError(f"cannot run {python}: {exc}") from None
    facts = json.loads(out)
    if facts["version"] is None or facts["mcp_path"] is None:
        raise SdkError(f"{python} has no mcp installed")
    return facts


def resolve(spec: str = "pinned", python: str = sys.executable, env: dict[str, str] | None = None) -> Sdk:
    """An Sdk for an interpreter (default: this one, with the project's pinned mcp)."""
    env = env or {}
    return Sdk(spec=spec, python=python, env=env, facts=read_facts(python, env))

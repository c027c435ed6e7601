"""Read what defines an SDK's interpreter, from inside it (fixtures/sdk_facts.py), without importing mcp here."""

from __future__ import annotations

import json
import subprocess

from stdio_probe.core.spawn import FIXTURES, child_env


class SdkError(Exception):
    """The SDK cannot be used: the message is one line for the user."""


def read_facts(python: str, env: dict[str, str]) -> dict:
    """Run fixtures/sdk_facts.py in the interpreter, in the environment its fixtures get (child_env: the mcp
    it finds is theirs); fail when it cannot run or has no mcp."""
    try:
        out = subprocess.run(
            [python, str(FIXTURES / "sdk_facts.py")],
            env=child_env(env),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        facts = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise SdkError(f"cannot run {python}: {exc}") from None
    if facts["version"] is None or facts["mcp_path"] is None:
        raise SdkError(f"{python} has no mcp installed")
    return facts

"""The probe's command line as a person or CI runs it, for the tests of every tier: in an 80-column terminal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import WIDTH, probe_env
from tests.paths import ROOT

PROBE = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py")]


def probe(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in an 80-column terminal; GitHub Actions only when env says so (even when the tests run there)."""
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, timeout=180, cwd=cwd, env=probe_env(env))


def github_env(summary: Path) -> dict:
    return {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}


def assert_fits(text: str) -> None:
    """Every line a person reads fits; GitHub's workflow commands (::error ...) are for the runner."""
    long = [line for line in text.splitlines() if len(line) > WIDTH and not line.startswith("::")]
    assert not long, long

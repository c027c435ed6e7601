"""The unit tier starts no process: a test here that tries fails, and belongs in its subject's tier."""

from __future__ import annotations

import os
import subprocess

import pytest


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("a unit test started a process: move it to its subject's tier")


@pytest.fixture(autouse=True)
def no_process_started(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way this interpreter starts a process is refused for the test's duration."""
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "system"):
        monkeypatch.setattr(os, name, _refuse)

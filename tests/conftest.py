"""Shared fixtures: the pinned SDK, its fixed copies, and a guard against leaked processes."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from stdio_probe import envs, spawn
from stdio_probe.sdk import Request, resolve
from stdio_probe.sdk import pinned as pinned_sdk
from tests.sdk_fixes import BREAKS, FIXES, OTHER_FIXES, patched_sdk

ROOT = Path(__file__).resolve().parent.parent
# what a build reads from the checkout: no environments, caches, build leftovers or results
NOT_SOURCES = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", "results*")


@pytest.fixture(scope="session")
def source_copy(tmp_path_factory) -> Path:
    """A copy of the checkout's sources, so that building or installing it leaves nothing in the checkout."""
    copy = tmp_path_factory.mktemp("source") / "stdio-probe"
    shutil.copytree(ROOT, copy, ignore=NOT_SOURCES)
    return copy


@pytest.fixture(scope="session")
def pinned():
    return pinned_sdk()


def _patched(pinned, tmp_path_factory, patches: dict, prefix: str):
    made = {}

    def make(name: str):
        if name not in made:
            made[name] = patched_sdk(tmp_path_factory.mktemp("sdk"), f"{prefix}{name}", patches[name], pinned)
        return made[name]

    return make


@pytest.fixture(scope="session")
def second_sdk():
    """mcp 2.3.0 from PyPI, in the default user cache: made on the first run, reused (and verified) after."""
    return resolve(Request("2.3.0", "pypi", "2.3.0"), envs.default_cache())


@pytest.fixture(scope="session")
def fixed(pinned, tmp_path_factory):
    """fixed(case_id) -> an Sdk copy of the pinned mcp with that one defect patched out; fixed("L7-at-caller")
    and the other OTHER_FIXES keys: the same defect fixed another way."""
    return _patched(pinned, tmp_path_factory, {**FIXES, **OTHER_FIXES}, "fix-")


@pytest.fixture(scope="session")
def broken(pinned, tmp_path_factory):
    """broken(name) -> an Sdk copy of the pinned mcp broken as BREAKS[name] says."""
    return _patched(pinned, tmp_path_factory, BREAKS, "")


@pytest.fixture(autouse=True)
def no_leaked_processes():
    """Fail any test that leaves a process carrying this run's marker alive (then reap it)."""
    yield
    deadline = time.monotonic() + 3.0
    while spawn.run_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = spawn.run_processes()
    if left:
        spawn.reap_all()
        pytest.fail(f"test left processes alive: {left}")

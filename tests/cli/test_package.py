"""The probe as a user installs it: a wheel built from this checkout, in a fresh environment, run elsewhere."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from stdio_probe import __version__
from stdio_probe.core import spawn
from stdio_probe.report import record
from stdio_probe.sdk import envs


def _clean_env() -> dict:
    """No trace of this checkout or of this test's interpreter: what a fresh shell has."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(sys.prefix))
    return env


def _run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=_clean_env())
    assert done.returncode == 0, f"{args}: {done.stderr[-2000:]}"
    return done


pytestmark = pytest.mark.network  # the wheel's dependencies, pytest and uvx's come from PyPI


@pytest.fixture(scope="module")
def installed(source_copy, tmp_path_factory) -> Path:
    """A fresh environment with the wheel built from the checkout installed, and nothing else."""
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", ".", "-w", "dist", cwd=source_copy)
    (wheel,) = (source_copy / "dist").glob("stdio_probe-*.whl")
    venv = tmp_path_factory.mktemp("installed") / "venv"
    uv = envs.find_uv()
    if uv:  # the fast way to the same result; pip below otherwise
        _run(uv, "venv", "-q", "--python", sys.executable, str(venv), cwd=venv.parent)
        _run(uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel), cwd=venv.parent)
    else:
        _run(sys.executable, "-m", "venv", str(venv), cwd=venv.parent)
        _run(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel), cwd=venv.parent)
    return venv


def test_wheel_installs_into_a_fresh_environment_and_runs_a_case_from_elsewhere(installed, tmp_path):
    venv = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _run(str(venv / "bin" / "probe-stdio-lifecycle"), "--only", "L2", "--out", "r.json", cwd=elsewhere)
    runs = json.loads((elsewhere / "r.json").read_text())["runs"]
    assert [(run["case"], run["verdict"]) for run in runs] == [("L2", "reproduced")], done.stdout
    # the fresh environment's mcp, nothing else (its path as a results file writes it: record.portable)
    assert runs[0]["sdk"]["mcp_path"].startswith(record.portable({"venv": f"{venv}/"})["venv"])
    version = _run(str(venv / "bin" / "python"), "-m", "stdio_probe", "--version", cwd=elsewhere)
    assert f"probe-stdio-lifecycle {__version__}" in version.stdout and "mcp==2.2.0" in version.stdout


def test_installed_pytest_loads_the_plugin_by_its_entry_point(installed, tmp_path):
    """A server author's suite with pytest and the probe installed: the stdio_probe fixture is there,
    with no -p and no conftest, and checks a server."""
    python = str(installed / "bin" / "python")
    uv = envs.find_uv()
    pytest_pin = f"pytest=={pytest.__version__}"
    if uv:
        _run(uv, "pip", "install", "-q", "--python", python, pytest_pin, cwd=tmp_path)
    else:
        _run(python, "-m", "pip", "install", "-q", pytest_pin, cwd=tmp_path)
    server = shlex.join([python, str(spawn.FIXTURES / "fixture_check_server.py")])
    (tmp_path / "test_server.py").write_text(
        f"def test_server(stdio_probe):\n    stdio_probe.server({server!r}, only='S1', window=3).assert_ok()\n"
    )
    done = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path)
    assert "1 passed" in done.stdout


@pytest.mark.skipif(envs.find_uv() is None, reason="uv is not installed")
def test_uvx_from_the_checkout_lists_the_cases(source_copy, tmp_path):
    uvx = Path(envs.find_uv()).with_name("uvx")
    done = _run(str(uvx), "--from", str(source_copy), "probe-stdio-lifecycle", "--list", cwd=tmp_path)
    assert done.stdout.splitlines()[0].startswith("L1 ")

"""The probe's secrets in no output (issue "Safe on anyone's machine"), on real processes through the CLI:
a server and a host that read what they can of their own and their ancestors' environments (env_dump.py)
and print it on stderr, on stdout and in an answer, with fake tokens in the probe's environment; the
redactor's rules; the guardian's environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from stdio_probe.core import env_args, spawn
from tests.cli_run import PROBE, github_env
from tests.conftest import probe_env
from tests.fixture_commands import HOSTILE, fixture_host
from tests.paths import TESTS

# first in the probe's environment, so the answer's first 80 characters hold two of them (eras.answer_text)
TOKENS = {
    "DEPLOY_VALUE": "glpat-fAkE0123456789abcdefXYZ",  # an innocent name, a token's form
    "GITHUB_TOKEN": "ghp_fAkE0123456789abcdefghijklmnopqrstuv",
    "MY_API_KEY": "fake-api-key-9f8e7d6c5b4a3210",  # a secret's name, no token's form
    "PROBE_TEST_PASSWORD": 'pa"ss\\word-fake-0123',  # escaped inside any JSON string
}
DUMPING_HOST = f"{sys.executable} {TESTS / 'env_dump.py'} {fixture_host()}"


def run_probe(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, list[str], dict]:
    """The CLI with every output (-v, JUnit, SVG, the GitHub summary) and TOKENS first in its environment:
    the process, every text it wrote or printed, and its results."""
    files = {name: tmp_path / name for name in ("results.json", "junit.xml", "summary.svg", "summary.md")}
    argv = [*args, "-v", "--out", str(files["results.json"]), "--junit", str(files["junit.xml"])]
    argv += ["--svg", str(files["summary.svg"]), "--window", "3"]
    env = {**TOKENS, **probe_env(github_env(files["summary.md"]))}
    with subprocess.Popen(
        [*PROBE, *argv], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        stdout, stderr = process.communicate(timeout=180)
    texts = [path.read_text() for path in files.values() if path.exists()] + [stdout, stderr]
    return process, texts, json.loads(files["results.json"].read_text())


def assert_no_secret(texts: list[str]) -> None:
    for name, value in TOKENS.items():
        for form in (value, json.dumps(value)[1:-1]):
            assert not [text for text in texts if form in text], f"{name}'s value in an output"


def probe_line(document: dict, field: str, pid: int) -> str:
    """The line a subject dumped of the probe's environment, from every run's arms' field (stderr)."""
    lines = [
        line
        for run in document["runs"]
        for arm in run["arms"].values()
        for line in _field(arm, field).splitlines()
        if line.startswith(f"environ of {pid}: ")
    ]
    assert lines, f"no subject dumped the probe's ({pid}) environment"
    return lines[0]


def _field(arm: dict, path: str) -> str:
    for key in path.split("."):
        arm = arm.get(key) or {}
    return arm if isinstance(arm, str) else ""


def assert_probe_unreadable_or_masked(line: str) -> None:
    """Another user's process reads nothing of the probe (it is undumpable); root (CAP_SYS_PTRACE) reads it
    all, and the masking is what holds."""
    if os.geteuid():
        assert line.endswith("unreadable (PermissionError)"), line
    else:
        assert f"GITHUB_TOKEN={env_args.MASK}" in line and f"MY_API_KEY={env_args.MASK}" in line, line


def test_a_server_reading_the_probes_environment_leaks_no_secret(tmp_path):
    """The server prints every environment it can read (its own, the probe's, and above) on stderr and
    stdout, and answers initialize with the probe's: no token is in results.json, JUnit, the SVG, the
    GitHub summary, stdout or stderr (-v). As root the probe's environment is readable to it (root passes the
    undumpable check), so only the masking is checked there; as another user, that it read nothing."""
    process, texts, document = run_probe(
        tmp_path, "--server", f"{sys.executable} {HOSTILE} dump-env", "--env", "MY_API_KEY", "--only", "S1,S4"
    )
    assert process.returncode == 0, texts[-1]
    assert_no_secret(texts)
    assert_probe_unreadable_or_masked(probe_line(document, "stderr", process.pid))


def test_a_host_reading_the_probes_environment_leaks_no_secret(tmp_path):
    """The same of a host (fixture_host.py wrapped by env_dump.py, which execs it): its stderr and stdout
    are in the records."""
    process, texts, document = run_probe(tmp_path, "--host", DUMPING_HOST, "--only", "H1")
    assert process.returncode == 0, texts[-1]
    assert_no_secret(texts)
    assert_probe_unreadable_or_masked(probe_line(document, "host.stderr", process.pid))


def test_the_redactor_masks_secrets_by_name_by_form_and_given_values_only_when_long_enough():
    environ = {
        "XDG_SESSION_TYPE": "wayland",  # a secret's name, too short to be told from words
        "HOME_TOKEN_DIR": "/home/someone/tokens",
        "INNOCENT": "AKIAABCDEFGHIJKLMNOP",
        "PLAIN": "just-a-plain-value",
    }
    redact = env_args.redactor(["--env", "FLAG=on", "--env=GIVEN=given-value", "--env", "PLAIN"], environ)
    text = "wayland /home/someone/tokens AKIAABCDEFGHIJKLMNOP just-a-plain-value given-value on sk-ant-a1b2c3d4e5"
    assert redact.text(text) == "wayland *** *** *** *** on ***"
    assert redact({"a": ['{"x": "pa\\"ss"}'], "n": 1}) == {"a": ['{"x": "pa\\"ss"}'], "n": 1}
    quoted = env_args.redactor([], {"SECRET": 'pa"ss\\word'})
    assert quoted({"a": [json.dumps({"x": 'pa"ss\\word'})], "n": 1}) == {"a": ['{"x": "***"}'], "n": 1}


def test_the_guardian_gets_no_secret(monkeypatch):
    """The guardian's environment, read where the kernel keeps it: PATH, PYTHONHOME and PYTHONPATH only."""
    monkeypatch.setitem(os.environ, "GITHUB_TOKEN", TOKENS["GITHUB_TOKEN"])
    spawn._guard()
    raw = Path(f"/proc/{spawn._guardian[0].pid}/environ").read_bytes()
    names = {entry.split(b"=", 1)[0].decode() for entry in raw.split(b"\0") if entry}
    assert names <= {*spawn.GUARDIAN_ENV, "PYTHONPATH"}

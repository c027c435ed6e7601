"""What a server under test gets of the probe's environment (issue 31), on real processes: what a host
gives it (HOME, LOGNAME, PATH, SHELL, TERM, USER and the markers), with HOME, the XDG folders, TMPDIR and
its working folder a sandbox's of its own, --env NAME and NAME=VALUE, --inherit-env; and a value given with
--env found in no file the probe writes.

The environment is read where the kernel keeps it (/proc/PID/environ, as exec gave it) and from
what the server prints of it (fixture_check_server.py --print-env), through the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import jsonschema
import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import env_args, spawn
from stdio_probe.core.model import ChildEnv, Options, Server
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.server import session
from tests.cli_run import probe
from tests.paths import ROOT

FIXTURE = spawn.FIXTURES / "fixture_check_server.py"
SECRET = ("PROBE_TEST_SECRET", "ghp_secret-of-the-probe-0123456789")
PASSED = ("PROBE_TEST_PASSED", "passed-from-the-probe-4567")
SET = ("PROBE_TEST_SET", "set-on-the-command-line-8910")


def command(*flags: str) -> str:
    return " ".join([sys.executable, str(FIXTURE), *flags])


def started_in(env: ChildEnv) -> tuple[dict[str, str], str, dict]:
    """The environment and working folder a started server was exec'd with, read from /proc once it answered
    (before that the read can land inside an exec, the stub's that resets SIGINT or the server's own: empty
    once in CI), and its record once ended."""
    started = session.Session(Server("fixture", command(), env=env))
    try:
        assert started.initialize(Options(10.0, "fast")), "the fixture server never answered initialize"
        raw = Path(f"/proc/{started.child.pid}/environ").read_bytes()
        cwd = os.readlink(f"/proc/{started.child.pid}/cwd")
    finally:
        record = started.end()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if item), cwd, record


def environ_of(env: ChildEnv) -> dict[str, str]:
    return started_in(env)[0]


@pytest.fixture
def secrets(monkeypatch):
    """The probe's environment holds a secret, a variable to pass, and a PYTHONPATH (as the pytest plugin sets)."""
    for name, value in (SECRET, PASSED):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


@pytest.mark.parametrize("probe_sigint", ["default", "ignored"])
def test_a_server_gets_what_a_host_gives_it_and_no_secret(secrets, probe_sigint):
    """Also from a probe whose SIGINT is ignored (a background job's), where a stub execs the server with SIGINT's
    default: its interpreter's locale coercion sets LC_CTYPE for itself, which the server must not get."""
    ignored = probe_sigint == "ignored"  # a background job's: both ignored (the suite restores both at its start)
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
    before_quit = signal.signal(signal.SIGQUIT, signal.SIG_IGN if ignored else signal.SIG_DFL)
    try:
        found = environ_of(ChildEnv())
    finally:
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGQUIT, before_quit)
    defaults = {name for name in spawn.HOST_DEFAULT_ENV if name in os.environ}
    assert set(found) == defaults | set(spawn.SANDBOX_FOLDERS) | {spawn.MARKER, spawn.SERVER_MARKER}
    assert found[spawn.MARKER] == spawn.RUN_ID
    assert SECRET[1] not in "".join(found.values())


@pytest.mark.parametrize("ignored", [(), (signal.SIGQUIT,), (signal.SIGINT, signal.SIGQUIT)])
def test_a_start_goes_through_the_stub_where_the_probe_ignores_sigint_or_sigquit(ignored):
    """Either one ignored (a background job's SIGQUIT, where the probe's SIGINT was restored) is passed on by exec:
    the stub restores both; with neither ignored the command is started as it is."""
    given = {signal.SIGINT: signal.default_int_handler, signal.SIGQUIT: signal.SIG_DFL}  # a terminal's
    before = {signum: signal.signal(signum, signal.SIG_IGN if signum in ignored else given[signum]) for signum in given}
    try:
        argv = spawn.from_a_shell([sys.executable, "server.py"], {})
    finally:
        for signum, disposition in before.items():
            signal.signal(signum, disposition)
    assert (argv[:3] == [sys.executable, "-I", "-S"]) == bool(ignored), argv
    assert argv[-2:] == [sys.executable, "server.py"]


def test_env_passes_a_variable_by_name_or_sets_one(secrets):
    found = environ_of(env_args.resolve([PASSED[0], f"{SET[0]}={SET[1]}"], inherit=False))
    assert found[PASSED[0]] == PASSED[1]
    assert found[SET[0]] == SET[1]
    assert SECRET[0] not in found and "PYTHONPATH" not in found


def test_a_server_starts_in_a_sandbox_of_its_own_in_the_runs_folder():
    """HOME, the XDG folders, TMPDIR and the working folder: new, in the run's folder, each start its own; the
    record names them relative to the run's folder. --env HOME passes the probe's own instead."""
    (found, cwd, record), (again, _, _) = started_in(ChildEnv()), started_in(ChildEnv())
    folder = spawn.current().run_folder()
    for variable, sub in record["sandbox"].items():
        assert not sub.startswith("/") and sub.startswith("sandbox-"), record["sandbox"]
        assert os.path.join(folder, sub) == (cwd if variable == "cwd" else found[variable])
    assert found["HOME"] != again["HOME"] and os.environ.get("HOME") not in (found["HOME"], again["HOME"])
    assert environ_of(env_args.resolve(["HOME"], inherit=False))["HOME"] == os.environ["HOME"]


def test_inherit_env_passes_everything(secrets):
    found = environ_of(ChildEnv(inherit=True))
    assert found[SECRET[0]] == SECRET[1]


def test_sdk_fixtures_get_the_defaults_and_what_the_sdk_needs(secrets):
    env = spawn.child_env({"PYTHONPATH": "/sdk/copy"})
    assert env["PYTHONPATH"] == "/sdk/copy"
    assert set(env) <= {*spawn.HOST_DEFAULT_ENV, "PYTHONPATH", spawn.MARKER}


def test_a_value_given_with_env_is_in_no_output(tmp_path):
    """Through the CLI: the server prints its environment on stderr (kept in results.json); the secret's
    name is nowhere, the --env variables reach it, and their values are in no file, stdout or stderr."""
    files = {name: tmp_path / name for name in ("results.json", "junit.xml", "summary.svg", "expect.json")}
    summary = tmp_path / "step_summary.md"
    done = probe(
        *("--server", command("--print-env"), "--only", "S1", "--window", "3", "-v"),
        *("--env", PASSED[0], "--env", f"{SET[0]}={SET[1]}"),
        *("--out", str(files["results.json"]), "--junit", str(files["junit.xml"])),
        *("--svg", str(files["summary.svg"]), "--write-expect", str(files["expect.json"])),
        cwd=tmp_path,
        env={
            **dict((SECRET, PASSED)),
            "PYTHONPATH": str(ROOT),
            "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(summary),
        },
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(files["results.json"].read_text())
    jsonschema.validate(document, json.loads(SCHEMA_PATH.read_text()))
    (run,) = document["runs"]
    assert run["server"]["env"] == {"names": sorted([PASSED[0], SET[0]]), "inherit": False}
    assert f"{SET[0]}=***" in document["metadata"]["argv"]
    for arm in run["arms"].values():
        printed = arm["stderr"].splitlines()
        assert f"{PASSED[0]}=***" in printed and f"{SET[0]}=***" in printed
        assert not [line for line in printed if line.startswith((SECRET[0], "PYTHONPATH="))]
    outputs = [path.read_text() for path in [*files.values(), summary]] + [done.stdout, done.stderr]
    for value in (SECRET[1], PASSED[1], SET[1]):
        assert not [text for text in outputs if value in text]


def test_env_is_checked_before_anything_is_spawned(capsys):
    assert cli.main(["--server", command(), "--env", "PROBE_TEST_NOT_SET_ANYWHERE"]) == cli.EXIT_USAGE
    assert "not set in the probe's environment" in capsys.readouterr().err
    assert cli.main(["--env", "A=1"]) == cli.EXIT_USAGE
    assert "--env does not go with run" in capsys.readouterr().err
    assert cli.main(["--server", command(), "--env", f"{spawn.MARKER}=x"]) == cli.EXIT_USAGE
    assert cli.main(["--server", command(), "--env", "A=1", "--env", "A=2"]) == cli.EXIT_USAGE


def test_argv_is_recorded_with_values_masked():
    argv = ["probe", "--env", "TOKEN=abc", "--env=KEY=v=w", "--env", "NAME", "--server", "x --env A=B"]
    assert env_args.masked_argv(argv) == ["probe", "--env", "TOKEN=***", "--env=KEY=***", "--env", "NAME", *argv[-2:]]


def test_redact_replaces_values_in_strings_only_when_long_enough():
    redact = env_args.redactor(["--env", "TOKEN=tok-123456", "--env", "FLAG=1"], {})
    document = {"stderr": "TOKEN=tok-123456 FLAG=1", "pid": 1, "lines": ["tok-123456"]}
    assert redact(document) == {"stderr": "TOKEN=*** FLAG=1", "pid": 1, "lines": ["***"]}

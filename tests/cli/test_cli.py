"""The command line as a user meets it: real runs, bad input, signals."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import jsonschema
import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import sample
from stdio_probe.core.model import BRIEF_CHARS
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS
from tests.paths import ROOT

PROBE = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py")]


def probe(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, **kwargs)


def case_lines(stdout: str) -> dict[str, str]:
    """The summary's line of each case, by case id."""
    return {line.split()[0]: line for line in stdout.splitlines() if line.split()[:1] in ([c] for c in CASES)}


def test_full_run_reproduces_every_case_on_pinned_sdk(pinned_run):
    runs = pinned_run["results"]["runs"]
    assert {run["case"]: run["verdict"] for run in runs} == dict.fromkeys(CASES, "reproduced"), [
        run["reason"] for run in runs
    ]
    assert pinned_run["results"]["metadata"]["leftover_processes"] == 0


def test_host_contract_holds_on_every_case_of_pinned_sdk(pinned_run):
    held = {run["case"]: run["mitigation"]["held"] for run in pinned_run["results"]["runs"]}
    assert held == dict.fromkeys(CASES, True), [run["mitigation"]["note"] for run in pinned_run["results"]["runs"]]
    for line in case_lines(pinned_run["done"].stdout).values():  # the last column says held, not "not held"
        assert line.split()[-1] == "held" and line.split()[-2] != "not", line


def test_results_match_the_schema(pinned_run):
    jsonschema.validate(pinned_run["results"], json.loads(SCHEMA_PATH.read_text()))


def test_summary_is_a_line_per_case_with_its_headline(pinned_run):
    lines = case_lines(pinned_run["done"].stdout)
    assert list(lines) == list(CASES)
    assert "hang proven" in lines["L1"] and "pipe full" in lines["L1"]
    for run in pinned_run["results"]["runs"]:  # every case gives its evidence in a few words, not its note cut
        assert run["headline"] and len(run["headline"]) <= BRIEF_CHARS and not run["headline"].endswith("…"), run
        assert run["headline"] in lines[run["case"]], (run["headline"], lines[run["case"]])


def test_verbose_summary_gives_every_reason_in_full(pinned_run, tmp_path):
    results = pinned_run["folder"] / "results.json"
    done = probe("--merge", str(tmp_path / "m.json"), str(results), "-v", env={**os.environ, "COLUMNS": "2000"})
    assert done.returncode == 0, done.stderr
    assert "65536/65536" in done.stdout and "writer thread in pipe write" in done.stdout


def test_only_runs_just_those_cases(tmp_path):
    out = tmp_path / "r.json"
    done = probe("--only", "l2,L4", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert [run["case"] for run in json.loads(out.read_text())["runs"]] == ["L2", "L4"]


def test_list_names_every_case_server_check_and_host_check():
    done = probe("--list")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == [*CASES, *CHECKS, *HOST_CHECKS]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "L99"], "unknown case L99"),
        (["--only", ","], "selects no case"),
        (["--window", "0"], "must be more than 0 and at most 3600 seconds"),
        (["--window", "inf"], "must be more than 0 and at most 3600 seconds"),
        (["--window", "nan"], "must be more than 0 and at most 3600 seconds"),
        (["--window", "soon"], "not a number of seconds"),
        (["--out", "/nonexistent/dir/r.json"], "does not exist"),
        (["--out", "/proc/r.json"], "--out"),
        (["--method", "slow"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    previous = tmp_path / "results.json"
    previous.write_text("previous")
    done = probe(*args, "--out", str(previous)) if "--out" not in args else probe(*args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert previous.read_text() == "previous"


def test_non_linux_host_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cli.main(["--only", "L1"]) == 2
    assert "needs Linux" in capsys.readouterr().err


def marked(given: str) -> list[int]:
    """The live processes whose run marker the probe namespaced under the value a supervisor gave it."""
    found = []
    for pid in (int(entry) for entry in os.listdir("/proc") if entry.isdigit()):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(v.startswith(f"PROBE_RUN_ID={given}/".encode()) for v in environ) and sample.is_live(pid):
            found.append(pid)
    return found


def test_a_supervisor_and_a_stranger_carrying_the_marker_survive_the_probe(tmp_path):
    """A supervisor that sets PROBE_RUN_ID in its own environment, and an unrelated process given the same
    value, are never signalled: the probe's marker is GIVEN/its own uuid, and it never signals its ancestors."""
    given = f"supervisor-test-{uuid.uuid4().hex}"
    env = {**os.environ, "PROBE_RUN_ID": given}
    stranger = subprocess.Popen(["sleep", "120"], env=env)
    out = tmp_path / "results.json"
    command = shlex.join([*PROBE, "--only", "L2", "--out", str(out)])
    try:
        done = subprocess.run(
            ["bash", "-c", f"{command} >{shlex.quote(str(tmp_path / 'summary'))}; echo after $?"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0 and done.stdout == "after 0\n", (done.returncode, done.stdout, done.stderr)
        assert stranger.poll() is None, "the probe signalled an unrelated process carrying the marker's value"
    finally:
        stranger.kill()
        stranger.wait()
    assert json.loads(out.read_text())["metadata"]["leftover_processes"] == 0
    assert marked(given) == []


MID_RUN_BOUND = 300.0  # a safety net only (a probe that never spawns): the run's progress ends the wait


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_mid_run_reaps_everything_and_keeps_old_results(sig, code, tmp_path):
    out = tmp_path / "results.json"
    out.write_text("previous")
    run_id = f"signal-test-{uuid.uuid4().hex}"
    env = {**os.environ, "PROBE_RUN_ID": run_id}
    proc = subprocess.Popen([*PROBE, "--out", str(out)], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        # its fixtures and drivers are up (the probe keeps the given value): the run is mid-arm. The probe's start
        # ends the wait, not a clock: on a loaded machine its import and first spawns took over 30 s
        deadline = time.monotonic() + MID_RUN_BOUND
        while len(marked(run_id)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(marked(run_id)) >= 3, f"the probe spawned nothing (exit {proc.poll()})"
        proc.send_signal(sig)
        assert proc.wait(15) == code
    finally:
        proc.kill()
        proc.wait()
    assert marked(run_id) == []
    assert out.read_text() == "previous"
    assert proc.stderr.read().count("\n") == 1

"""The GitHub Action (action.yml) executed step by step, as a runner would: inputs substituted, the
GitHub environment set (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_ACTION_PATH,
RUNNER_TEMP), each `run:` step in bash -eo pipefail, `if:` honoured, step outputs passed on. The two
`uses:` steps stand in as a runner's would be observed: setup-python puts this interpreter first on
PATH; upload-artifact must find its files. The probe itself is installed from this checkout into a
fresh environment by the action's own step and runs for real against the stdlib check server.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from stdio_probe.core import spawn
from tests.paths import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
SERVER = shlex.join([sys.executable, str(spawn.FIXTURES / "fixture_check_server.py"), "--ignore-sigterm"])
STEP_TIMEOUT = 600  # the install step fetches the probe's pinned dependencies


@dataclass
class Job:
    """One execution of the action: what each step did, and what the runner would show."""

    outcomes: list[tuple[str, str]] = field(default_factory=list)  # (step name, success/failure/skipped)
    logs: str = ""
    uploaded: list[Path] = field(default_factory=list)
    summary: str = ""
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(outcome == "failure" for _, outcome in self.outcomes)


def run_action(inputs: dict[str, str], action_path: Path, runner_temp: Path, workspace: Path) -> Job:
    """Every step of action.yml, checked out at action_path, in order, as GitHub runs a composite action."""
    given = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | inputs
    job, bin_dir = Job(), runner_temp / "setup-python-bin"
    summary = runner_temp / "step_summary.md"
    summary.touch()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON", "VIRTUAL_ENV"))},
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTION_PATH": str(action_path),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_WORKSPACE": str(workspace),
    }
    context = {"inputs": given, "runner.temp": str(runner_temp), "github.action_path": str(action_path)}

    def value(expression: str) -> str:
        if expression.startswith("inputs."):
            return context["inputs"][expression.removeprefix("inputs.")]
        if expression.startswith("steps."):
            step_id, _, name = expression.removeprefix("steps.").partition(".outputs.")
            return job.outputs.get(step_id, {}).get(name, "")
        return context[expression]  # a KeyError: the action uses an expression this harness does not know

    def substitute(text: str) -> str:
        return EXPRESSION.sub(lambda m: value(m.group(1)), str(text))

    for step in ACTION["runs"]["steps"]:
        name = step.get("name") or step.get("uses")
        condition = step.get("if", "success()")
        if condition not in ("always()", "success()"):
            raise AssertionError(f"the harness does not evaluate if: {condition}")
        if condition == "success()" and job.failed:
            job.outcomes.append((name, "skipped"))
            continue
        if "uses" in step:
            job.outcomes.append((name, _uses(step, substitute, job, bin_dir)))
            continue
        assert step.get("shell") == "bash", f"{name}: every run step names its shell"
        output = runner_temp / f"output-{len(job.outcomes)}"
        output.touch()
        step_env = {**env, "GITHUB_OUTPUT": str(output), "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
        step_env |= {key: substitute(val) for key, val in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", substitute(step["run"])],
            cwd=workspace, env=step_env, capture_output=True, text=True, timeout=STEP_TIMEOUT,
        )
        job.logs += done.stdout + done.stderr
        if "id" in step:
            job.outputs[step["id"]] = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
        job.outcomes.append((name, "success" if done.returncode == 0 else "failure"))
    job.summary = summary.read_text()
    return job


def _uses(step: dict, substitute, job: Job, bin_dir: Path) -> str:
    """The two actions the composite uses, as their effects would be seen by the steps after them."""
    action, inputs = step["uses"], {k: substitute(v) for k, v in step.get("with", {}).items()}
    if action.startswith("actions/setup-python@"):
        assert inputs["python-version"], "setup-python gets a version"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "python").unlink(missing_ok=True)
        (bin_dir / "python").symlink_to(sys.executable)
        return "success"
    if action.startswith("actions/upload-artifact@"):
        assert inputs["name"]
        job.uploaded = sorted(p for p in Path(inputs["path"]).glob("*") if p.is_file())
        return "success"
    raise AssertionError(f"the action uses {action}, which this harness does not stand in for")


pytestmark = pytest.mark.network  # the action's install step fetches the probe's pinned dependencies


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory) -> Path:
    """One runner's temp for the module: the action's install step makes its environment once, reuses it after."""
    return tmp_path_factory.mktemp("runner_temp")


@pytest.fixture
def action(source_copy, runner_temp, tmp_path):
    """action(inputs) -> the Job: the action checked out as a copy of this checkout, run in tmp_path."""
    return lambda inputs: run_action(inputs, source_copy, runner_temp, tmp_path)


def _gate(tmp_path: Path, s3: str) -> Path:
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps({"S1": "not_reproduced", "S3": s3}))
    return expect


def _args() -> str:
    return f"--server {shlex.quote(SERVER)} --name fixture --only S1,S3 --window 3"


def test_a_met_expectation_passes_with_summary_and_artifacts(action, runner_temp, tmp_path):
    job = action({"args": _args(), "expect": str(_gate(tmp_path, "reproduced"))})
    assert not job.failed, job.logs[-3000:]
    assert job.outputs["probe"]["exit-code"] == "0"
    assert "## stdio lifecycle probe: fixture" in job.summary
    assert "Every run meets the expectations (2 runs)." in job.summary
    assert [p.name for p in job.uploaded] == ["junit.xml", "results.json"]
    results = json.loads((runner_temp / "stdio-probe-results" / "results.json").read_text())
    assert {run["case"]: run["verdict"] for run in results["runs"]} == {"S1": "not_reproduced", "S3": "reproduced"}


def test_a_mismatch_annotates_fails_the_step_and_still_uploads(action, runner_temp, tmp_path):
    job = action({"args": _args(), "expect": str(_gate(tmp_path, "not_reproduced"))})
    assert job.outputs["probe"]["exit-code"] == "1"
    assert job.outcomes[-2:] == [
        ("actions/upload-artifact@v4", "success"),
        ("Fail as the probe's exit code says", "failure"),
    ]
    assert "::error title=verdict mismatch::S3 on fixture: expected not_reproduced, got reproduced" in job.logs
    assert "a verdict differs from its expectation" in job.logs
    assert "### Expectations not met" in job.summary and "- mismatch: S3 on fixture" in job.summary
    junit = ET.parse(runner_temp / "stdio-probe-results" / "junit.xml").getroot()
    assert junit.get("failures") == "1" and [p.name for p in job.uploaded] == ["junit.xml", "results.json"]


def test_bad_input_fails_the_step_with_the_probes_line(action):
    job = action({"args": "--server 'no-such-server-program'"})
    assert job.outputs["probe"]["exit-code"] == "2"
    assert "no-such-server-program not found" in job.logs and "bad input" in job.logs
    assert job.outcomes[-1] == ("Fail as the probe's exit code says", "failure")

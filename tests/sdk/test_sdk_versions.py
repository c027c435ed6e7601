"""Against other SDKs: a second PyPI version for real, an SDK lacking what a case probes, and the CLI's
SDK errors, expectations and bisect exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core.model import Options
from stdio_probe.core.runner import run_matrix
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.sdk import envs
from tests.sdk_fixes import WITHOUT_CONNECT_WITH_SESSION, patched_sdk

FAST = Options(window=10.0, method="fast")


def _runs(sdks, case_ids):
    return run_matrix(sdks, case_ids, FAST)


# The quick cases (L5's and L6's outage timelines cost tens of seconds; the reference run covers them).
SECOND_SDK_CASES = ["L1", "L2", "L3", "L4"]


@pytest.mark.network  # mcp 2.3.0 is installed from PyPI on the first run
def test_second_pypi_version_reproduces_the_quick_cases(second_sdk):
    runs = _runs([second_sdk], SECOND_SDK_CASES)
    assert {run["case"]: run["verdict"] for run in runs} == dict.fromkeys(SECOND_SDK_CASES, "reproduced"), [
        run["reason"] for run in runs
    ]
    sdk = runs[0]["sdk"]
    assert (sdk["spec"], sdk["version"], sdk["source"], sdk["packages"]["mcp"]) == ("2.3.0", "2.3.0", "pypi", "2.3.0")
    assert sdk["executable"].startswith(str(envs.default_cache()))


def test_sdk_lacking_what_a_case_probes_is_not_applicable(pinned, tmp_path):
    lacking = patched_sdk(tmp_path, "without-connect-with-session", WITHOUT_CONNECT_WITH_SESSION, pinned)
    verdicts = {run["case"]: (run["verdict"], run["reason"]) for run in _runs([lacking], ["L3", "L4"])}
    assert verdicts["L3"][0] == "reproduced", verdicts
    assert verdicts["L4"][0] == "not_applicable" and "connect_with_session" in verdicts["L4"][1], verdicts


def _main(tmp_path, *args):
    return cli.main(["--out", str(tmp_path / "results.json"), "--env-dir", str(tmp_path / "envs"), *args])


@pytest.mark.network  # the installer asks the index for mcp==99.99.99
def test_pypi_version_that_does_not_exist_is_a_usage_error(tmp_path, capsys):
    assert _main(tmp_path, "--only", "L3", "--sdk", "99.99.99") == cli.EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "error: cannot install mcp==99.99.99: no such release of mcp on the package index", err
    assert not (tmp_path / "results.json").exists()
    envs_dir = tmp_path / "envs"
    left = [p.name for p in envs_dir.iterdir() if p.is_dir()] if envs_dir.exists() else []
    assert left == [], "a failed creation left a folder"


def test_interpreter_without_mcp_is_a_usage_error(tmp_path, capsys):
    subprocess.run([envs.base_python(), "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    assert _main(tmp_path, "--python", str(tmp_path / "bare" / "bin" / "python")) == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip().endswith("has no mcp installed")


def _broken_wheel(tmp_path) -> str:
    wheel = tmp_path / "mcp-0.0.1-py3-none-any.whl"
    wheel.write_text("not a zip")
    return str(wheel)


def test_one_bad_sdk_among_several_is_an_error_verdict_and_the_others_run(tmp_path):
    broken = _broken_wheel(tmp_path)
    assert _main(tmp_path, "--only", "L3", "--sdk", broken, "--python", sys.executable) == cli.EXIT_OK
    results = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(results, json.loads(SCHEMA_PATH.read_text()))
    verdicts = {(run["sdk"]["spec"], run["sdk"]["source"]): run["verdict"] for run in results["runs"]}
    assert verdicts == {(sys.executable, "interpreter"): "reproduced", (broken, "path"): "error"}


def test_expectations_gate_mismatches_and_stale_entries(tmp_path, capsys):
    expectations = tmp_path / "expect.json"
    expectations.write_text(json.dumps({"L3": {"2.2.0": "not_reproduced", "9.9.9": "reproduced"}}))
    assert _main(tmp_path, "--only", "L3", "--expect", str(expectations)) == cli.EXIT_MISMATCH
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("expectation:")]
    assert len(lines) == 2, lines
    assert "expected not_reproduced, got reproduced" in lines[0]
    assert "mcp 9.9.9" in lines[1] and "nothing in this run checked it" in lines[1]
    expectations.write_text(json.dumps({"L3": "reproduced", "L1": {"9.9.9": "reproduced"}}))
    assert _main(tmp_path, "--only", "L3", "--expect", str(expectations)) == cli.EXIT_OK  # L1 is out of scope


@pytest.mark.parametrize(
    ("document", "message"),
    [({"L3": "fixed"}, "'fixed' is not a verdict"), ({"L99": "reproduced"}, "'L99' is not a case")],
)
def test_expectations_file_with_an_unknown_verdict_or_case_is_a_usage_error(tmp_path, capsys, document, message):
    expectations = tmp_path / "expect.json"
    expectations.write_text(json.dumps(document))
    assert _main(tmp_path, "--only", "L3", "--expect", str(expectations)) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--only", "L3"], cli.BISECT_BAD),
        (["--only", "L3,L4"], cli.BISECT_ABORT),
        (["--only", "L3", "--sdk", "BROKEN"], cli.BISECT_SKIP),
    ],
)
def test_bisect_exit_codes(tmp_path, args, code):
    args = [_broken_wheel(tmp_path) if arg == "BROKEN" else arg for arg in args]
    assert _main(tmp_path, "--bisect", *args) == code


def test_bisect_maps_verdicts_for_git():
    codes = {v: cli.bisect_code([{"verdict": v}]) for v in ("reproduced", "not_reproduced", "inconclusive", "error")}
    assert codes == {"reproduced": 1, "not_reproduced": 0, "inconclusive": 125, "error": 125}


def test_bisect_na_says_how_a_commit_where_the_case_does_not_apply_counts():
    na = [{"verdict": "not_applicable"}]
    assert {how: cli.bisect_code(na, how) for how in ("skip", "good", "bad")} == {"skip": 125, "good": 0, "bad": 1}
    assert cli.bisect_code(na) == 125  # the default: a commit without the API says nothing
    for how in ("good", "bad"):  # the other verdicts keep their meaning
        assert cli.bisect_code([{"verdict": "reproduced"}], how) == 1
        assert cli.bisect_code([{"verdict": "inconclusive"}], how) == 125
    assert cli.parse_args(["--bisect", "--bisect-na", "good"]).bisect_na == "good"
    with pytest.raises(cli.UsageError, match="invalid choice"):
        cli.parse_args(["--bisect-na", "maybe"])

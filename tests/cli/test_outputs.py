"""What a run writes besides results.json, on real runs: the 80-column report, JUnit, the GitHub summary,
--out -, expectations written and gated, compare, the CI matrix, and merged shards.

The outputs of the session's one full run of the pinned SDK (conftest.py: pinned_run, with every output
option, under GitHub Actions) are read as they are; for the merge, the gate and compare, its L2 run is
shard a, and one more real run of L2 (one fast case) on the same interpreter named by --python, which
makes a second subject, is shard b.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from stdio_probe import __version__
from stdio_probe.cli import main as cli
from stdio_probe.core import model, outcome
from stdio_probe.report import ci_output, expect, record, record_history, report
from stdio_probe.report.record import SCHEMA_PATH, SCHEMA_VERSION
from stdio_probe.sdk.cases import CASES
from tests.cli_run import assert_fits, github_env, probe
from tests.conftest import WIDTH
from tests.paths import ROOT

PROG = "probe-stdio-lifecycle"








def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@pytest.fixture(scope="session")
def shards(pinned_run, tmp_path_factory) -> dict:
    """Shard a: the pinned run's results cut to its L2 run, as `--only L2` writes them; shard b: L2 run with
    --python, results on stdout."""
    folder = tmp_path_factory.mktemp("shards")
    a = copy.deepcopy(pinned_run["results"])
    a["runs"] = [pinned_run["runs"]["L2"]]
    (folder / "a.json").write_text(json.dumps(a))
    b = probe("--only", "L2", "--python", sys.executable, "--out", "-", cwd=folder)
    assert b.returncode == 0, b.stderr
    (folder / "b.json").write_text(b.stdout)
    return {"folder": folder, "b": b}


def test_summary_is_one_line_per_case_within_80_columns(pinned_run):
    out = pinned_run["done"].stdout
    assert_fits(out)
    lines = [line for line in out.splitlines() if line.split()[:1] in ([c] for c in CASES)]
    assert [line.split()[0] for line in lines] == list(CASES)
    (line,) = [line for line in lines if line.split()[0] == "L2"]
    assert line.split()[1] == "reproduced" and "session died" in line and line.split()[-2:] != ["not", "held"]
    assert line.split()[-1] == "held"


def test_a_log_that_is_not_a_terminal_gets_a_progress_line_per_case_and_no_line_ends_in_a_space(pinned_run, shards):
    lines = pinned_run["done"].stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("stdio lifecycle probe: pinned"))
    progress = [
        re.fullmatch(r"(\d+)/(\d+) pinned (L\d+): arms done \((\d+) of (\d+) arms\)", line) for line in lines[:title]
    ]
    assert all(progress), lines[:title]
    assert sorted(m[3] for m in progress) == sorted(CASES)
    assert [int(m[1]) for m in progress] == list(range(1, len(CASES) + 1))
    assert progress[-1][4] == progress[-1][5]  # the last line: every arm done
    assert f"1/1 {sys.executable} L2: arms done (5 of 5 arms)" in shards["b"].stderr
    for output in (pinned_run["done"].stdout, shards["b"].stderr):
        assert [line for line in output.splitlines() if line != line.rstrip()] == []


def test_results_on_stdout_are_the_whole_file_and_the_report_goes_to_stderr(shards):
    document = json.loads(shards["b"].stdout)
    jsonschema.validate(document, schema())
    assert [run["verdict"] for run in document["runs"]] == ["reproduced"]
    assert "session died" in shards["b"].stderr and "results written to stdout" in shards["b"].stderr


def test_junit_has_a_failing_testcase_for_a_reproduced_defect_without_expect(pinned_run):
    root = ET.parse(pinned_run["folder"] / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert [case.get("name").split()[0] for case in cases] == list(CASES)
    for case in cases:
        assert case.get("classname") == "pinned (mcp 2.2.0)" and case.find("failure").get("type") == "reproduced"
    assert root.get("tests") == root.get("failures") == str(len(CASES))


def test_github_summary_is_markdown_of_the_run(pinned_run):
    text = (pinned_run["folder"] / "summary.md").read_text()
    assert text.startswith("## stdio lifecycle probe: pinned (mcp 2.2.0)")
    assert "| L2 | 🔴 reproduced | session died" in text
    assert "::error" not in pinned_run["done"].stdout  # nothing was expected, so nothing is annotated


def test_svg_is_the_summary(pinned_run):
    svg = (pinned_run["folder"] / "summary.svg").read_text()
    assert svg.startswith("<svg") and "session died" in svg.replace("&#160;", " ")


def test_written_expectations_gate_the_same_results(pinned_run):
    expectations = json.loads((pinned_run["folder"] / "expect.json").read_text())
    assert expectations == {case: {"2.2.0": "reproduced"} for case in CASES}


def test_merge_of_shards_is_valid_shows_a_matrix_and_gates(shards, tmp_path):
    folder = shards["folder"]
    expectations = tmp_path / "expect.json"
    expectations.write_text(json.dumps({"L2": {"pinned": "reproduced", sys.executable: "not_reproduced"}}))
    summary = tmp_path / "summary.md"
    merged, junit = tmp_path / "merged.json", tmp_path / "merged.xml"
    done = probe(
        *("--merge", str(merged), "a.json", "b.json", "--expect", str(expectations), "--junit", str(junit)),
        cwd=folder,
        env=github_env(summary),
    )
    assert done.returncode == cli.EXIT_MISMATCH, done.stderr
    document = json.loads(merged.read_text())
    jsonschema.validate(document, schema())
    assert len(document["runs"]) == 2 and len(document["metadata"]["shards"]) == 2
    assert_fits(done.stdout)
    rows = [line for line in done.stdout.splitlines() if line.lstrip().startswith(("pinned (mcp", sys.executable[:20]))]
    assert [row.split()[-1] for row in rows] == ["bug", "bug"], done.stdout  # the matrix: a row per subject
    (annotation,) = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert "expected not_reproduced, got reproduced" in annotation
    failures = {c.get("classname"): c.find("failure") for c in ET.parse(junit).getroot().iter("testcase")}
    assert failures["pinned (mcp 2.2.0)"] is None and failures[f"{sys.executable} (mcp 2.2.0)"] is not None
    assert "### Expectations not met" in summary.read_text()


def test_an_undecided_run_under_expect_exits_3_not_1(shards, tmp_path):
    document = json.loads((shards["folder"] / "a.json").read_text())
    document["runs"][0]["verdict"] = "inconclusive"  # its L2 run
    shard = tmp_path / "inconclusive.json"
    shard.write_text(json.dumps(document))
    expectations = tmp_path / "expect.json"
    expectations.write_text(json.dumps({"L2": "reproduced"}))
    done = probe("--merge", "m.json", str(shard), "--expect", str(expectations), cwd=tmp_path)
    assert done.returncode == outcome.EXIT_UNDECIDED, done.stderr
    expectations.write_text(json.dumps({"L2": "inconclusive"}))
    assert probe("--merge", "m.json", str(shard), "--expect", str(expectations), cwd=tmp_path).returncode == 0


def test_an_expected_case_that_no_shard_reported_fails_the_merged_gate(shards, tmp_path):
    expectations = tmp_path / "expect.json"
    expectations.write_text(json.dumps({"L2": {"2.2.0": "reproduced"}, "L3": {"2.2.0": "reproduced"}}))
    done = probe("--merge", "m.json", "b.json", "--expect", str(expectations), cwd=shards["folder"])
    assert done.returncode == cli.EXIT_MISMATCH and "L3 on mcp 2.2.0" in done.stderr
    done = probe("--merge", "m.json", "b.json", "--expect", str(expectations), "--only", "L2", cwd=shards["folder"])
    assert done.returncode == cli.EXIT_OK, done.stderr


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (["a.json", "a.json"], "is in both"),
        ([str(ROOT / "results" / "results.json")], f"--merge takes {SCHEMA_VERSION}"),
        (["missing.json"], "No such file"),
    ],
)
def test_merge_refuses_duplicates_other_versions_and_missing_files(shards, tmp_path, inputs, message):
    out = tmp_path / "merged.json"
    done = probe("--merge", str(out), *inputs, cwd=shards["folder"])
    assert done.returncode == cli.EXIT_USAGE
    assert done.stderr.count("\n") == 1 and message in done.stderr and not out.exists()


def test_compare_shows_verdict_changes_as_a_table_and_as_markdown(shards, tmp_path):
    old = shards["folder"] / "a.json"
    document = json.loads(old.read_text())
    document["runs"][0]["verdict"] = "not_reproduced"
    new = tmp_path / "new.json"
    new.write_text(json.dumps(document))
    table = probe("--compare", str(old), str(new), cwd=tmp_path)
    assert table.returncode == 1
    assert_fits(table.stdout)
    (row,) = [line for line in table.stdout.splitlines() if " L2 " in line]
    assert "reproduced" in row and "not_reproduced" in row
    markdown = probe("--compare", str(old), str(new), "--markdown", cwd=tmp_path)
    assert "| pinned (mcp 2.2.0) | L2 | reproduced | not_reproduced |" in markdown.stdout
    same = probe("--compare", str(old), str(old), cwd=tmp_path)
    assert same.returncode == 0 and "no verdict changed (1 runs)" in same.stdout
    alone = probe("--markdown", cwd=tmp_path)
    assert alone.returncode == cli.EXIT_USAGE and "--markdown does not go with run" in alone.stderr


def test_list_matrix_gives_one_entry_per_sdk_and_case_whose_args_select_it(tmp_path):
    done = probe("--list-matrix", "--only", "L1,L3", "--sdk", "2.3.0", "--python", sys.executable, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    include = json.loads(done.stdout)["include"]
    assert [(e["sdk"], e["case"]) for e in include] == [
        ("2.3.0", "L1"),
        ("2.3.0", "L3"),
        (sys.executable, "L1"),
        (sys.executable, "L3"),
    ]
    for entry in include:
        args = cli.parse_args(shlex.split(entry["args"]))
        assert args.only == entry["case"] and entry["sdk"] in (args.sdk, args.python)
        assert "/" not in entry["name"] and " " not in entry["name"]


def test_version_names_the_probe_and_the_pinned_mcp(tmp_path):
    done = probe("--version", cwd=tmp_path)
    assert done.returncode == 0
    assert f"probe-stdio-lifecycle {__version__}" in done.stdout and "mcp==2.2.0" in done.stdout


def test_help_lists_every_case_examples_and_exit_codes_within_80_columns(tmp_path):
    done = probe("--help", cwd=tmp_path)
    assert done.returncode == 0
    assert_fits(done.stdout)
    for case_id, case in CASES.items():
        assert f"{case_id} " in done.stdout and case.title in done.stdout
    assert "examples:" in done.stdout and "exit codes:" in done.stdout and "--merge" in done.stdout


def test_live_view_fits_80_columns_however_long_the_notes():
    rows = [(f"/a/long/path/to/an/sdk/checkout-{i}", "L1", arm) for i in range(12) for arm in ("bug", "control")]
    live = report.LiveArms(Console(file=io.StringIO(), width=WIDTH), rows)
    for row in rows[:10]:
        live(*row, "running", "")
    for row in rows[:6]:
        live(*row, "done", "hang proven 0.23 s after EOF, " * 10)
    out = io.StringIO()
    Console(file=out, width=WIDTH).print(live._view())
    assert_fits(out.getvalue())
    assert "6 of 24 done" in out.getvalue() and out.getvalue().count("running") == 4


def test_matrix_words_fit_twelve_cases_and_mark_a_contract_not_held(pinned_run):
    run = pinned_run["runs"]["L2"]
    runs = []
    for spec in ("1.30.0", "2.0.0", "2.3.0"):
        for n in range(1, 13):
            runs.append(copy.deepcopy(run) | {"case": f"L{n}"})
            runs[-1]["sdk"] = {**run["sdk"], "spec": spec, "version": spec}
    runs[-1]["mitigation"] = {"held": False, "note": "still stuck", "status": "not_held"}
    out = io.StringIO()
    Console(file=out, width=WIDTH).print(report.summary(runs))
    assert_fits(out.getvalue())
    assert "L12" in out.getvalue() and "bug!" in out.getvalue()


def test_a_contract_not_evaluated_is_marked_beside_the_verdict_in_every_output(shards):
    """A mitigated arm that failed where the case applies: its own mark in the matrix, its own words in the
    summary and the GitHub summary, and a failed JUnit testcase of its own (the verdict's testcase unchanged)."""
    run = json.loads((shards["folder"] / "a.json").read_text())["runs"][0]
    lost = copy.deepcopy(run)
    lost["mitigation"] = {"held": None, "note": "mitigated arm: ValueError: boom", "status": "not_evaluated"}
    other = copy.deepcopy(lost) | {"sdk": {**run["sdk"], "spec": "2.3.0", "version": "2.3.0"}}
    other["mitigation"] = {"held": None, "note": "too old"}  # an older file: no status, held null, the case applies
    other = record_history.upgrade({"schema_version": 10, "metadata": {}, "runs": [other]})["runs"][0]
    out = io.StringIO()
    Console(file=out, width=WIDTH).print(report.summary([lost]), report.summary([lost, other]))
    assert "not evaluated" in out.getvalue() and out.getvalue().count("bug*") == 2, out.getvalue()
    assert "* host contract not evaluated" in out.getvalue()
    assert "**not evaluated**" in ci_output.step_summary([lost], None)
    assert "(host contract not evaluated)" in ci_output.step_summary([lost, other], None)
    root = ET.fromstring(ci_output.junit([lost], None))
    verdict, contract = root.iter("testcase")
    assert verdict.find("failure").get("type") == "reproduced"
    assert contract.get("name") == "L2 host contract"
    assert contract.find("failure").get("type") == "host_contract_not_evaluated"
    assert "ValueError: boom" in contract.find("failure").get("message")
    held = copy.deepcopy(run) | {"mitigation": {"held": True, "note": "fine", "status": "held"}}
    assert len(list(ET.fromstring(ci_output.junit([held], None)).iter("testcase"))) == 1


def test_readme_workflow_runs_real_probe_commands(tmp_path):
    """docs/ci.md's sharding workflow: its plan step's matrix is real, and every probe step parses."""
    blocks = [block.split("```", 1)[0] for block in (ROOT / "docs" / "ci.md").read_text().split("```yaml\n")[1:]]
    (workflow,) = [block for block in blocks if f"{PROG} matrix" in block]
    steps = [line.split("run: ", 1)[1] for line in workflow.splitlines() if "run: " in line and PROG in line]
    plan, shard, merge = steps
    done = probe(*shlex.split(plan.split("$(", 1)[1].split(")", 1)[0])[1:], cwd=tmp_path)
    include = json.loads(done.stdout)["include"]
    assert {(e["sdk"], e["case"]) for e in include} == {(v, c) for v in ("2.2.0", "2.3.0") for c in CASES}
    for entry in include:
        command = shard.replace("${{ matrix.args }}", entry["args"]).replace("${{ matrix.name }}", entry["name"])
        args = cli.parse_args(shlex.split(command)[1:])
        assert (args.sdk, args.only, args.out) == (entry["sdk"], entry["case"], f"results-{entry['name']}.json")
    args = cli.parse_args(shlex.split(merge)[1:])
    assert args.merge[0] == Path("results.json") and args.expect == Path("expectations.json") and args.junit


def test_written_expectations_split_one_version_by_subject_when_its_runs_disagree(tmp_path):
    def run(spec: str, version: str, verdict: str) -> dict:
        return {"case": "L1", "sdk": {"spec": spec, "version": version}, "verdict": verdict, "reason": "r"}

    runs = [run("pinned", "2.2.0", "reproduced"), run("2.2.0", "2.2.0", "not_reproduced")]
    runs.append(run("2.3.0", "2.3.0", "reproduced"))
    document = expect.expectations(runs)
    assert document == {"L1": {"pinned": "reproduced", "2.2.0": "not_reproduced", "2.3.0": "reproduced"}}
    path = tmp_path / "expect.json"
    path.write_text(json.dumps(document))
    assert expect.problems(expect.load(path), runs, ["L1"]) == []


RECORDS = ROOT / "tests" / "data" / "records"
GARBLED = "\x1b[31mred\x1b[0m \x01bell\x07 \ud800 \x9b2J"  # ESC, controls, a lone surrogate, a C1 CSI


def test_every_output_of_stored_records_with_garbled_text_is_well_formed_and_escaped(tmp_path, monkeypatch):
    """Server runs whose label, reason, headline and notes carry ESC, control characters and a lone surrogate
    (what a server's stderr or an invalid UTF-8 argument brings), gated by an expectation they miss: the
    report, -v, JUnit, SVG, the page, the job summary and the annotations hold them only as visible escapes."""
    document = record.read(RECORDS / "servers.json")
    document["runs"] = runs = document["runs"][:3]
    for run in runs:
        run["server"]["label"] = f"srv{GARBLED}"
        run["reason"] += f" stderr: {GARBLED}"
        run["headline"] = f"seen {GARBLED}"
        run["mitigation"]["note"] += GARBLED
    expected = expect.parse({run["case"]: {f"srv{GARBLED}": "inconclusive"} for run in runs}, "test")
    summary, junit, svg, page = tmp_path / "summary.md", tmp_path / "j.xml", tmp_path / "s.svg", tmp_path / "p.html"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out, err = io.StringIO(), io.StringIO()
    for verbose in (False, True):
        args = argparse.Namespace(verbose=verbose, svg=svg, junit=junit, html=page, write_expect=None)
        gate = cli.Gate([run["case"] for run in runs], expected)
        code = cli.finish(document, gate, args, "written", (Console(file=out, width=WIDTH), Console(file=err)))
        assert code == cli.EXIT_MISMATCH
        ET.parse(junit)
        ET.parse(svg)
    texts = (out.getvalue(), err.getvalue(), summary.read_text(), junit.read_text(), svg.read_text(), page.read_text())
    for text in texts:
        assert not model.UNPRINTABLE.search(text), text
    assert "::error title=verdict mismatch::" in out.getvalue() and "srv\\x1b[31m" in out.getvalue()
    assert "\\x01bell\\x07 \\ud800 \\x9b2J" in out.getvalue() and "\\ud800" in junit.read_text()


def test_the_live_view_escapes_labels_and_notes():
    rows = [(f"srv{GARBLED}", "S1", "bug")]
    out = io.StringIO()
    live = report.LiveArms(Console(file=out, width=WIDTH), rows)
    live(*rows[0], "done", f"seen {GARBLED}")
    view = io.StringIO()
    Console(file=view, width=200).print(live._view())
    for text in (out.getvalue(), view.getvalue()):
        assert not model.UNPRINTABLE.search(text) and "srv\\x1b[31m" in text, text
    assert "seen \\x1b[31m" in view.getvalue()


def test_a_name_with_control_characters_or_invalid_utf8_is_refused_before_anything_runs(tmp_path):
    previous = tmp_path / "results.json"
    previous.write_text("previous")
    for name in ("ctl\x01", "esc\x1b[31m", "bad\udcff", "two\nlines"):
        done = probe("server", sys.executable, "--name", name, "--junit", "j.xml", "--out", str(previous), cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "control characters or invalid UTF-8" in done.stderr and not model.UNPRINTABLE.search(done.stderr)
        assert previous.read_text() == "previous" and not (tmp_path / "j.xml").exists()


def test_verbose_shows_the_stderr_tail_of_an_exit_that_was_not_clean():
    """A server's exit 120 (S8) or a host's exit 1: -v's block names what its stderr ended with; a clean exit or
    the probe's own signal adds nothing."""
    crashed = {"ended_by": "self", "exit_code": 120, "stderr": "starting\n\nError: write EPIPE\n  at afterWrite\n"}
    clean = {"ended_by": "self", "exit_code": 0, "stderr": "bye\n"}
    killed = {"ended_by": "SIGKILL", "exit_code": -9, "stderr": "still here\n"}
    server = {"server": {}, "arms": {"bug": crashed, "other": clean, "third": killed}}
    assert report.exit_causes(server) == [("bug stderr", "Error: write EPIPE | at afterWrite")]
    host = {"host": {}, "arms": {"bug": {"host": {**crashed, "exit_code": 1}, "events": []}}}
    assert report.exit_causes(host) == [("bug stderr", "Error: write EPIPE | at afterWrite")]

"""Reading results files of every schema version, and the outcome tables: pure, nothing is spawned.

tests/data/records/schema/ holds a few runs of a real file of each older version (README.md there says
which); record.read must give each in the current shape, and the verdict, reason and host-contract status
it gives must be those a run of the same arms written today gets (decide, mitigation).
"""

from __future__ import annotations

import ast
import dataclasses
import json

import jsonschema
import pytest

from stdio_probe.core import outcome
from stdio_probe.core.decide import decide, decide_check, mitigation
from stdio_probe.core.model import shorten
from stdio_probe.core.outcome import CONTRACT, MEANING, UNMET, Contract, Outcome, Unmet
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report import record, record_history
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS
from tests.paths import ROOT

OLD = sorted((ROOT / "tests" / "data" / "records" / "schema").glob("*.json"))
PROBES = {**CASES, **CHECKS, **HOST_CHECKS}
SCHEMA = json.loads(record.SCHEMA_PATH.read_text())


def test_every_version_has_its_history_and_a_stored_file():
    assert list(record_history.VERSIONS) == list(range(1, record.SCHEMA_VERSION + 1))
    versions = {record.stored(path)["schema_version"] for path in OLD}
    assert versions == set(range(1, record.SCHEMA_VERSION))
    assert SCHEMA["properties"]["schema_version"]["const"] == record.SCHEMA_VERSION


@pytest.mark.parametrize("path", OLD, ids=[path.stem for path in OLD])
def test_an_older_file_reads_as_the_current_schema(path):
    stored = record.stored(path)
    document = record.read(path)
    assert document["schema_version"] == record.SCHEMA_VERSION
    errors = [error.message for error in jsonschema.Draft202012Validator(SCHEMA).iter_errors(document)]
    if stored["schema_version"] > 1:
        assert errors == []
    else:  # schema 1 had no mitigated arm, and no step can make one: the only objection left
        assert errors == ["'mitigated' is a required property"] * len(document["runs"])
    for run in document["runs"]:
        assert run["headline"] and run["verdict"] in MEANING and run["mitigation"]["status"] in CONTRACT
        if run.get("host", {}).get("era"):
            assert run["host"]["servers"] in ("one server", "a server per operation", "several at once")


def _today(run: dict) -> dict:
    """What the probe writes today of this run's arms: decide's verdict, and the host contract's judgement."""
    probe = PROBES[run["case"]]
    if "server" in run:
        return {**decide_check(probe, run["arms"]), "status": Contract.NOT_APPLICABLE}
    if "host" in run:
        return {**decide(probe, run["arms"]), "status": Contract.NOT_APPLICABLE}
    if not all(arm in run["arms"] for pair in probe.pairs.values() for arm in pair):
        probe = dataclasses.replace(probe, pairs={})  # a run from before the case had its second pair
    status = mitigation(probe, run["arms"])["status"] if "mitigated" in run["arms"] else Contract.NOT_EVALUATED
    return {**decide(probe, run["arms"]), "status": status}


@pytest.mark.parametrize("path", OLD, ids=[path.stem for path in OLD])
def test_an_upgraded_run_says_what_the_same_run_written_today_says(path):
    for run in record.read(path)["runs"]:
        today = _today(run)
        assert (run["verdict"], run["reason"]) == (today["verdict"], today["reason"]), run["case"]
        assert run["mitigation"]["status"] == today["status"], (run["case"], run["mitigation"])


def test_a_current_file_is_read_as_it_was_written():
    path = ROOT / "tests" / "data" / "records" / "hosts-shapes.json"  # schema 10, with every field 11 requires
    stored = record.stored(path)
    assert record.read(path)["runs"] == stored["runs"]


def test_derived_fields_are_the_ones_readers_showed_before():
    """The headline of a run before 5 is its reason cut; a host's servers are what its events show."""
    v4 = record.read(next(path for path in OLD if path.stem == "v4"))["runs"][0]
    assert v4["headline"] == shorten(v4["reason"])
    hosts = record.read(next(path for path in OLD if path.stem == "v10-hosts"))["runs"]
    assert {run["host"]["servers"] for run in hosts} == {"one server"}
    assert all("servers" not in run["host"] for run in record.stored(OLD[0].parent / "v10-hosts.json")["runs"])


def test_a_run_without_what_readers_key_on_is_refused(tmp_path):
    path = tmp_path / "results.json"
    run = {"case": "S1", "server": {"label": "x", "command": "x"}, "verdict": "broken", "reason": "r", "arms": {}}
    path.write_text(json.dumps({"schema_version": 7, "metadata": {}, "runs": [{**run, "mitigation": {}}]}))
    with pytest.raises(record.ResultsError, match="a verdict"):
        record.read(path)
    path.write_text(json.dumps({"schema_version": 7, "metadata": {}, "runs": [{**run, "verdict": "error"}]}))
    with pytest.raises(record.ResultsError, match="a mitigation"):
        record.read(path)


def test_every_outcome_has_a_row_and_the_schema_names_them_all():
    assert MEANING.keys() == set(Outcome) and UNMET.keys() == set(Unmet) and CONTRACT.keys() == set(Contract)
    run = SCHEMA["properties"]["runs"]["items"]["properties"]
    assert run["verdict"]["enum"] == list(Outcome)
    assert run["mitigation"]["properties"]["status"]["enum"] == list(Contract)
    assert {m.pytest for m in MEANING.values()} | {c.pytest for c in UNMET.values()} <= {"failed", "error", "passed"}
    assert {m.junit for m in MEANING.values()} <= {"failure", "error", "skipped", None}
    assert all(len(m.word) <= 3 for m in MEANING.values())


def test_a_mismatch_outranks_an_undecided_run_in_the_exit_code():
    assert outcome.exit_code(set()) == outcome.EXIT_OK
    assert outcome.exit_code({Unmet.UNDECIDED}) == outcome.EXIT_UNDECIDED
    assert outcome.exit_code({Unmet.UNDECIDED, Unmet.STALE}) == outcome.EXIT_MISMATCH
    assert outcome.exit_code({Unmet.MISMATCH}) == outcome.EXIT_MISMATCH


# the words that are only ever an outcome. "error", "not_applicable" and "held" are other things too: keys of an
# arm's facts and of a mitigation, a JSON-RPC answer's kind, JUnit's and pytest's words; they are left out here
OUTCOME_WORDS = {"reproduced", "not_reproduced", "inconclusive", "not_held", "not_evaluated", "undecided", "mismatch"}
OUTCOME_WORDS |= {"stale"}


def _outcome_literals(tree: ast.AST) -> list[str]:
    """String constants that are an outcome's word, but for a key (a dict literal's, a subscript's, a get's, the
    left of an `in`): a record's facts may be named so."""
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {id(key) for key in node.keys if key is not None}
        elif isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("get", "setdefault", "pop"):
                keys.add(id(node.args[0]))
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            keys.add(id(node.left))  # "error" in record: a key
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in keys:
            if node.value in OUTCOME_WORDS:
                found.append(f"{node.lineno}: {node.value!r}")
    return found


def test_no_outcome_word_is_written_out_of_outcome_py():
    """Every verdict, status and unmet expectation is outcome.py's member (fixtures excepted: they run in the
    SDK's interpreter and write facts, never verdicts)."""
    package = ROOT / "stdio_probe"
    found = {}
    for path in sorted(package.rglob("*.py")):
        if path.name == "outcome.py" or "fixtures" in path.relative_to(package).parts:
            continue
        if literals := _outcome_literals(ast.parse(path.read_text())):
            found[str(path.relative_to(ROOT))] = literals
    assert found == {}

"""tests/ecosystem.toml, the ecosystem table's list, has the shape its rule states (read, never run); the matrix,
the record of a failed install and the not-run entries are what the workflow and the page read."""

from __future__ import annotations

import datetime
import json
import re

import pytest

from stdio_probe.core import runner
from stdio_probe.report import record
from tests import ecosystem
from tests.third_party_hosts import RECIPES

LISTED = ecosystem.load()
ENTRIES = [*LISTED.servers, *LISTED.hosts]
PLACEHOLDER = re.compile(r"\{[a-z]+\}")


def test_the_rule_and_the_date_are_written_down() -> None:
    assert isinstance(LISTED.figures_read, datetime.date)
    assert "15 most downloaded" in LISTED.rule and "6 most used" in LISTED.rule
    assert all(count > 0 for count in LISTED.candidates.values())


@pytest.mark.parametrize(("kind", "entries", "each"), [("server", LISTED.servers, 15), ("host", LISTED.hosts, 6)])
def test_half_from_each_registry_alternately_each_by_its_figure(kind: str, entries: list, each: int) -> None:
    """npm's first, PyPI's first, npm's second, ...; npm's by downloads (most first), PyPI's by rank."""
    assert [entry.kind for entry in entries] == [kind] * 2 * each
    assert [entry.registry for entry in entries] == ["npm", "pypi"] * each
    downloads = [entry.downloads_a_month for entry in entries[0::2]]
    ranks = [entry.pypi_rank for entry in entries[1::2]]
    assert downloads == sorted(downloads, reverse=True)
    assert ranks == sorted(ranks)
    assert len({entry.package for entry in entries}) == len(entries)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: entry.package)
def test_each_entry_is_pinned_with_its_figure(entry: ecosystem.Entry) -> None:
    assert re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", entry.version), entry.version  # a version, not a range or a tag
    if entry.registry == "npm":
        assert entry.pypi_rank is None and entry.downloads_a_month > 0
    else:
        assert entry.downloads_a_month is None and 1 <= entry.pypi_rank <= 15_000
    assert entry.language and entry.runtime


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: entry.package)
def test_each_entry_has_a_recipe_or_the_reason_it_has_none(entry: ecosystem.Entry) -> None:
    ways = entry.recipe if entry.kind == "server" else entry.adapter
    assert (ways is None) != (entry.no_recipe is None), "a recipe or a reason, not both"
    assert entry.no_recipe is None or len(entry.no_recipe) > 20
    assert entry.adapter is None or (RECIPES / entry.adapter).is_file()
    assert entry.kind == "host" or entry.adapter is None
    assert entry.kind == "server" or entry.recipe is None


@pytest.mark.parametrize("entry", LISTED.servers, ids=lambda entry: entry.package)
def test_a_server_was_started_by_hand_and_its_recipe_names_no_path_of_a_machine(entry: ecosystem.Entry) -> None:
    """Every server's start is recorded; a recipe's words name files only through the placeholders."""
    assert entry.started and re.match(r"\d{4}-\d{2}-\d{2}: ", entry.started), entry.started
    if entry.recipe is None:
        return
    recipe = entry.recipe
    words = [*recipe.args, *recipe.env.values()]
    for call in (recipe.large_call, recipe.slow_call):
        if call is not None:
            words += [value for value in call.arguments.values() if isinstance(value, str)]
    assert not [word for word in words if word.startswith("/")], "an absolute path: use a placeholder"
    assert set(PLACEHOLDER.findall(" ".join(words))) <= set(ecosystem.PLACEHOLDERS)
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", name) for name in [*recipe.env, *recipe.secrets])
    assert "/" not in recipe.program


def test_every_host_with_an_adapter_names_an_existing_file_and_pins_what_it_runs_on() -> None:
    adapted = [entry for entry in LISTED.hosts if entry.adapter is not None]
    assert len(adapted) == 8  # the 4 coding agents need a model's credential
    for entry in adapted:
        assert (RECIPES / entry.adapter).is_file(), entry.adapter
        assert all(re.fullmatch(r"[A-Za-z0-9_.\[\]-]+==[0-9][0-9A-Za-z.+-]*", pin) for pin in entry.requires)


def test_the_matrix_has_one_job_per_entry_with_a_recipe_or_an_adapter() -> None:
    include = ecosystem.matrix(ecosystem.chosen(LISTED, None))["include"]
    runnable = [entry for entry in ENTRIES if entry.recipe is not None or entry.adapter is not None]
    assert [job["package"] for job in include] == [entry.package for entry in runnable]
    assert [job["kind"] for job in include] == [entry.kind for entry in runnable]
    names = [job["name"] for job in include]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) for name in names)
    assert json.loads(json.dumps(include)) == include  # what the workflow reads with fromJSON


def test_only_names_entries_that_can_run() -> None:
    assert [entry.package for entry in ecosystem.chosen(LISTED, "mcp,mcp-server-git")] == ["mcp-server-git", "mcp"]
    with pytest.raises(ValueError, match="mcp-remote"):
        ecosystem.chosen(LISTED, "mcp-remote")  # listed, with no recipe: it needs a service


STORED_FAILURE = (  # what tests/ecosystem.py recorded of pdf-tools-mcp's install here (uv finds no Python 3.12)
    "not installed: uv venv --quiet: exit 2: error: Failed to inspect Python interpreter from first executable in "
    "the search path at `~/.pyenv/shims/python3.12`"
)


@pytest.mark.parametrize("package", ["pdf-tools-mcp", "huggingface-hub[mcp]"])
def test_a_failed_install_is_an_error_cell_per_check_with_its_reason(package: str) -> None:
    """A package that does not install is recorded, not a failed run: every check an error saying why, every arm
    the error (nothing started), in a document the schema and merge accept."""
    entry = next(entry for entry in ENTRIES if entry.package == package)
    runs = ecosystem.errored(entry, STORED_FAILURE)
    kind = runner.KINDS[entry.kind]
    assert [found["case"] for found in runs] == list(kind.probes)
    for found in runs:
        assert found[entry.kind]["label"] == package
        assert found["verdict"] == "error" and STORED_FAILURE in found["reason"]
        assert set(found["arms"]) == set(kind.probes[found["case"]].arms)
        assert all(arm["error"] == STORED_FAILURE for arm in found["arms"].values())
    meta = record.stored(ecosystem.RESULTS)["metadata"]  # a real run's (record.metadata would start uname)
    record.validate(record.results(meta, runs), package)


def test_entries_without_a_recipe_are_described_with_their_reason() -> None:
    not_run = [ecosystem.described(entry) for entry in ENTRIES if entry.no_recipe is not None]
    assert len(not_run) == 7  # 3 servers, 4 coding agents
    assert all(about["not_run"] and about["version"] and about["figure"] for about in not_run)


def test_the_readme_shows_the_tables_summary_of_the_committed_run() -> None:
    """The README's server and host sections hold `python -m tests.ecosystem summary` of results/ecosystem.json."""
    readme = (ecosystem.RESULTS.parent.parent / "README.md").read_text()
    document = record.stored(ecosystem.RESULTS)
    for kind in ("server", "host"):
        assert ecosystem.summary(document, kind) in readme, kind

"""tests/ecosystem.toml, the ecosystem table's list, has the shape its rule states (read, never run)."""

from __future__ import annotations

import datetime
import re

import pytest

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

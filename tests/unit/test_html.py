"""The page of a results document (report/html.py) on stored records: nothing is spawned, the page is parsed.

tests/cli/test_html_page.py opens a page in a real browser; here its structure: a grid per kind, a cell per
(subject, probe) with its outcome's class and mark, a panel per cell, nothing loaded from outside, every
hostile string escaped, every output bounded.
"""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser

import pytest

from stdio_probe.core.outcome import Outcome
from stdio_probe.core.spawn import STDERR_LIMIT
from stdio_probe.report import html, record
from tests.paths import ROOT

RECORDS = ROOT / "tests" / "data" / "records"
HOSTILE = '</pre></td><script>alert(1)</script><img src=x onerror="alert(2)"> & "\'\x1b[31m'


class Page(HTMLParser):
    """What a test reads of a page: every element's tag and attributes, in order, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, tag: str, **wanted: str) -> list[dict]:
        found = [attrs for name, attrs in self.elements if name == tag]
        return [attrs for attrs in found if all(attrs.get(key) == value for key, value in wanted.items())]


def merged() -> dict:
    """A document of the three kinds of subject: stored SDK, server and host runs."""
    document = record.read(RECORDS / "servers.json")
    document["runs"] = document["runs"][:20]
    document["runs"] += record.read(RECORDS / "hosts.json")["runs"][:11]
    document["runs"] += record.read(RECORDS / "pinned.json")["runs"]
    return document


def test_a_document_of_several_kinds_gives_a_grid_per_kind_with_a_row_per_subject():
    document = merged()
    text = html.page(document)
    parsed = Page(text)
    assert [attrs["class"] for attrs in parsed.having("section") if attrs.get("class", "").startswith("kind-")] == [
        "kind-sdk",
        "kind-server",
        "kind-host",
    ]
    assert len(parsed.having("table", **{"class": "grid"})) == 3
    subjects = {record.subject(run) for run in document["runs"]}
    grids = text.split('<section class="evidence"')[0]
    assert grids.count("<tr><th scope=\"row\">") == len(subjects) == 4  # two servers, a host, an SDK


def test_every_cell_links_to_its_own_panel_and_every_id_is_unique():
    document = merged()
    parsed = Page(html.page(document))
    ids = [attrs["id"] for _, attrs in parsed.elements if "id" in attrs]
    assert len(ids) == len(set(ids))
    panels = {attrs["id"] for attrs in parsed.having("section", **{"class": "evidence"})}
    assert len(panels) == len(document["runs"])
    links = [attrs["href"][1:] for attrs in parsed.having("a") if attrs.get("href", "").startswith("#run-")]
    assert len(links) == len(set(links)) == len(document["runs"]) and set(links) == panels


def test_every_outcome_has_its_class_colour_and_mark_and_a_probe_not_run_is_a_cell_of_its_own():
    document = record.read(RECORDS / "servers.json")
    first = [run for run in document["runs"] if record.subject(run) == record.subject(document["runs"][0])]
    runs = []
    for n, verdict in enumerate(Outcome):
        run = copy.deepcopy(first[n])
        run["verdict"] = verdict
        runs.append(run)
    other = copy.deepcopy(runs[0])
    other["server"]["label"] = "another server"
    document["runs"] = [*runs, other]  # the other server ran only the first check: the rest are not run
    text = html.page(document)
    parsed = Page(text)
    for verdict in Outcome:
        cells = parsed.having("td", **{"class": f"o-{verdict}"})
        assert len(cells) == 1 + (verdict == runs[0]["verdict"]), verdict
        assert re.search(rf"\.o-{verdict} {{ background: #[0-9a-f]{{6}}", html.STYLE), verdict
        assert f">{html.MARK[verdict][0]}</a></td>" in text
    assert len(parsed.having("td", **{"class": f"o-{html.NOT_RUN}"})) == len(Outcome) - 1
    assert len({re.search(rf"\.o-{key} {{ (background: [^;]+)", html.STYLE)[1] for key in [*Outcome, "not_run"]}) == 6


def test_hostile_text_is_escaped_wherever_it_appears():
    document = record.read(RECORDS / "servers.json")
    document["runs"] = runs = document["runs"][:4]
    document["metadata"]["argv"] = ["probe", HOSTILE]
    for run in runs:
        run["server"]["label"] = f"srv{HOSTILE}"
        run["server"]["command"] = HOSTILE
        run["reason"] += f"; bug: {HOSTILE}"
        run["headline"] = HOSTILE
        for arm in run["arms"].values():
            arm["stderr"] = HOSTILE
    text = html.page(document)
    assert "<script" not in text and "<img" not in text and "\x1b" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "\\x1b[31m" in text
    parsed = Page(text)
    assert [tag for tag, _ in parsed.elements if tag in ("script", "img", "iframe", "object")] == []
    assert any(HOSTILE.replace("\x1b", "\\x1b") in piece for piece in parsed.text)


def test_the_page_loads_nothing_from_outside():
    text = html.page(merged())
    for outside in ("<script", "<link", "<img", "@import", "url(", "src=", "http://", "https://"):
        assert outside not in text, outside


def test_an_output_longer_than_the_records_bound_is_cut_to_its_end():
    document = record.read(RECORDS / "servers.json")
    document["runs"] = [document["runs"][0]]
    arm = next(iter(document["runs"][0]["arms"].values()))
    arm["stderr"] = "a" * 100_000 + "THE END"
    text = html.page(document)
    assert "THE END" in text and "a" * (STDERR_LIMIT + 1) not in text
    assert f"100007 characters, the last {STDERR_LIMIT} shown" in text


def test_a_panel_holds_the_probes_title_what_v_prints_the_arms_and_the_host_rule():
    document = record.read(RECORDS / "hosts.json")
    run = next(run for run in document["runs"] if run["case"] == "H1")
    document["runs"] = [run]
    text = html.page(document)
    assert "H1: graceful close: stdin closed, the server exits before any signal" in text
    rule = "host_contract.shutdown_child (close stdin, drain, bounded wait, then SIGTERM)."
    assert f"<h3>Host rule</h3><p>{rule}</p>" in text
    for name in run["arms"]:
        assert f'<th scope="row">{name}</th>' in text
    assert "What was observed" in text and ("shows the defect" in text or "does not show it" in text)


@pytest.mark.parametrize(
    "path",
    sorted([*RECORDS.glob("*.json"), *(ROOT / "results").glob("*.json")]),
    ids=lambda path: f"{path.parent.name}/{path.name}",
)
def test_every_stored_results_file_renders(path):
    document = record.read(path)
    parsed = Page(html.page(document))
    assert len(parsed.having("section", **{"class": "evidence"})) == len(document["runs"])

"""The page (--html) in a real browser: Debian's Chromium, headless, driven by playwright (never its own browser
build: executable_path). report renders the committed servers' table; the grid must show a row per server and a
column per check, a cell the colour of its outcome, and a cell clicked must show its evidence, and none before.

Without /usr/bin/chromium (or playwright) the test is skipped and says why, unless STDIO_PROBE_REQUIRE_BROWSER=1
(.ci/run sets it, after installing Chromium): then it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stdio_probe.report import record
from tests.cli_run import probe
from tests.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BOUND_MS = 60_000  # the browser's start and every wait in it: many times what they take on a loaded machine
REPRODUCED_RGB = "rgb(213, 94, 0)"  # html.STYLE's .o-reproduced, #d55e00


def browser_or_skip():
    """playwright's sync API, or a skip naming what is missing (a failure when the browser is required)."""
    required = os.environ.get("STDIO_PROBE_REQUIRE_BROWSER") == "1"
    missing = None if CHROMIUM.is_file() else f"{CHROMIUM} is absent (Debian's package: apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = missing or "the playwright package is absent (requirements-dev.txt)"
    if missing:
        if required:
            pytest.fail(f"STDIO_PROBE_REQUIRE_BROWSER=1, but {missing}")
        pytest.skip(missing)
    return sync_playwright


def test_the_page_of_the_servers_table_renders_its_grid_and_a_cells_evidence(tmp_path):
    sync_playwright = browser_or_skip()
    page_path = tmp_path / "servers.html"
    done = probe("report", str(ROOT / "results" / "servers.json"), "--html", page_path.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"page written to {page_path.name}" in done.stdout
    runs = record.read(ROOT / "results" / "servers.json")["runs"]
    subjects = list(dict.fromkeys(record.subject(run) for run in runs))
    checks = {run["case"] for run in runs}
    reproduced = next(run for run in runs if run["verdict"] == "reproduced")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=BOUND_MS)
        try:
            page = browser.new_page()
            page.set_default_timeout(BOUND_MS)
            page.goto(page_path.as_uri())
            grid = page.locator("section.kind-server table.grid")
            assert grid.locator("tbody tr").count() == len(subjects)
            assert set(grid.locator("thead th").all_inner_texts()) == {"subject", *checks}
            row = grid.locator("tbody tr").nth(subjects.index(record.subject(reproduced)))
            assert row.locator("th").inner_text().startswith(reproduced["server"]["label"])
            cell = grid.locator(f"td:has(a[href='#run-{runs.index(reproduced)}'])")
            assert cell.inner_text() == "R"
            assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == REPRODUCED_RGB
            panel = page.locator(f"#run-{runs.index(reproduced)}")
            assert not panel.is_visible()
            cell.locator("a").click()
            panel.wait_for(state="visible")
            shown = panel.inner_text()
            assert f"{reproduced['case']}: " in shown and "What was observed" in shown and "reproduced" in shown
            assert reproduced["headline"] in shown
            panel.locator("a.close").click()
            panel.wait_for(state="hidden")
        finally:
            browser.close()

"""The terminal's matrix of a merged table (report._Matrix) on the committed ecosystem table: nothing is spawned.

At 80 columns the fifteen server checks and eleven host checks do not fit in one grid; cut to fit, every case's
column stays whole (a cut one read "…" for every verdict), and servers and hosts each get grids of their own.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from stdio_probe.report import report
from tests.cli_run import assert_fits
from tests.paths import ROOT

SUBJECT = report.SUBJECT_WIDTH + 1  # the box's edge and the subject column: the only place an ellipsis may be


@pytest.mark.parametrize("width", [60, 80, 200])
def test_a_merged_table_of_servers_and_hosts_is_cut_into_whole_columns_at_any_width(width):
    runs = json.loads((ROOT / "results" / "ecosystem.json").read_text())["runs"]
    out = io.StringIO()
    Console(file=out, width=width).print(report.summary(runs))
    text = "\n".join(line.rstrip() for line in out.getvalue().splitlines())  # a file's lines are padded
    if width == 80:
        assert_fits(text)
    grids = [block.splitlines() for block in re.split(r"\n\n+", text) if " subject " in block]
    assert all(grid[0].startswith(" subject ") for grid in grids)
    headers = [grid[0].split()[1:] for grid in grids]
    cases = list(dict.fromkeys(run["case"] for run in runs))
    assert [case for header in headers for case in header] == cases  # each case's column once, whole, in order
    assert all(len({case[0] for case in header}) == 1 for header in headers)  # servers' grids apart from hosts'
    for grid in grids:
        assert all(len(line) <= width and "…" not in line[SUBJECT:] for line in grid), grid
    rows = [line for grid in grids for line in grid[2:] if line[:SUBJECT].strip()]  # below the header and its rule
    verdicts = [word for row in rows for word in row[SUBJECT:].split()]
    assert len(verdicts) == len(runs) and all(row[SUBJECT:].split() for row in rows)  # a row only where it has cells

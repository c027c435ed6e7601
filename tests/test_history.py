"""The SDK's history: release ranges from the real index, cut-offs as of each release, the release table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from stdio_probe import index
from stdio_probe.release_table import changes, markdown, ranges, verdicts_by_release
from stdio_probe.sdk import requests

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "results" / "releases.json"


def _run(case: str, version: str, verdict: str, source: str = "pypi") -> dict:
    return {"case": case, "verdict": verdict, "sdk": {"source": source, "version": version}}


def test_release_table_groups_agreeing_releases_in_version_order_and_names_each_change():
    document = {
        "runs": [
            _run("L1", "1.10.0", "reproduced"),
            _run("L2", "1.10.0", "reproduced"),
            _run("L1", "1.9.0", "not_applicable"),
            _run("L2", "1.9.0", "reproduced"),
            _run("L1", "1.2.0", "not_applicable"),
            _run("L2", "1.2.0", "reproduced"),
            _run("L1", "2.0.0", "reproduced"),
            _run("L2", "2.0.0", "not_reproduced"),
            _run("L1", "9.9.9", "error", source="path"),  # a local tree is no release
        ]
    }
    cases, releases = verdicts_by_release(document)
    assert cases == ["L1", "L2"] and list(releases) == ["1.2.0", "1.9.0", "1.10.0", "2.0.0"]
    assert [(first, last, count) for first, last, count, _ in ranges(releases, cases)] == [
        ("1.2.0", "1.9.0", 2),
        ("1.10.0", "1.10.0", 1),
        ("2.0.0", "2.0.0", 1),
    ]
    assert changes(releases, cases) == {
        "L1": [("1.10.0", "not_applicable", "reproduced")],
        "L2": [("2.0.0", "reproduced", "not_reproduced")],
    }
    table = markdown(document)
    assert "| 1.2.0 – 1.9.0 (2) | n/a | R |" in table and "- L2: R → – at 2.0.0" in table


def test_index_cuts_a_release_off_at_its_last_upload_rounded_up_and_knows_yanked_releases():
    document = {
        "versions": ["1.0.0", "1.1.0"],
        "files": [
            {"filename": "mcp-1.0.0.tar.gz", "upload-time": "2024-11-25T10:00:00.100000Z"},
            {"filename": "mcp-1.0.0-py3-none-any.whl", "upload-time": "2024-11-25T10:00:03.000000Z"},
            {"filename": "mcp-1.1.0-py3-none-any.whl", "upload-time": "2024-12-01T00:00:00Z", "yanked": "broken"},
        ],
    }
    assert index.parse(document) == [
        index.Release("1.0.0", "2024-11-25T10:00:03Z", False),
        index.Release("1.1.0", "2024-12-01T00:00:00Z", True),
    ]


def test_a_range_selects_releases_from_the_real_index_oldest_first(tmp_path):
    chosen = [r.spec for r in requests(">=1.20,<1.22", None, tmp_path)]
    assert chosen and chosen == sorted(chosen, key=lambda v: tuple(map(int, v.split("."))))
    assert all(v.startswith(("1.20.", "1.21.")) for v in chosen)
    assert "2.0.0" in [r.spec for r in requests("all", None, tmp_path)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [(">=99", "no release of mcp on the index matches"), (">=1.x", "not a PEP 440 version specifier")],
)
def test_a_range_that_selects_nothing_or_does_not_parse_is_one_line_and_exit_2(tmp_path, spec, message):
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), "--sdk", spec, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not out.exists()


def test_the_release_sweep_gives_every_release_a_real_verdict_as_of_its_own_day(tmp_path):
    """results/releases.json: every case on every release from 1.0.0, no error or inconclusive, and each
    release's environment cut off at that release's upload time on the real index."""
    document = json.loads(RELEASES.read_text())
    on_index = index.releases(tmp_path)
    cutoffs = {r.version: r.cutoff for r in on_index}
    cases, releases = verdicts_by_release(document)
    assert len(cases) == 12
    wanted = {r.version for r in on_index if not r.yanked and not Version(r.version).is_prerelease}
    assert {v for v in wanted if Version(v) >= Version("1.0.0")} <= set(releases)
    for run in document["runs"]:
        assert run["verdict"] in ("reproduced", "not_reproduced", "not_applicable"), (run["sdk"]["version"], run)
        sdk = run["sdk"]
        assert sdk["exclude_newer"] == cutoffs[sdk["version"]] and sdk["exclude_newer_basis"] == "release_upload"

"""A release sweep's summary (report/sweep_summary.py): every run kept, the arms only on the newest release;
the committed results/releases.json is one. Pure: nothing is spawned."""

from __future__ import annotations

import json

from stdio_probe.report import record, release_table, sweep_summary
from tests.paths import ROOT


def _run(case: str, version: str, source: str = "pypi") -> dict:
    arms = {"bug": {"started_at": 1.0, "duration_s": 0.5, "stderr": "boom"}, "control": {"started_at": 1.0}}
    sdk = {"spec": version, "source": source, "version": version}
    return {"case": case, "sdk": sdk, "verdict": "reproduced", "reason": "r", "headline": "h", "arms": arms}


def test_every_run_is_kept_and_only_the_newest_release_keeps_its_arms():
    runs = [_run("L1", "1.10.0"), _run("L1", "1.9.0"), _run("L2", "1.10.0"), _run("L1", "9.9.9", source="path")]
    error = {"case": "L1", "sdk": {"spec": "1.11.0", "source": "path"}, "verdict": "error", "reason": "x", "arms": {}}
    document = {"schema_version": 10, "metadata": {"argv": ["probe_stdio_lifecycle.py"]}, "runs": [*runs, error]}
    kept = json.loads(json.dumps(document))
    summary = sweep_summary.summary(document)
    assert document == kept  # the sweep itself is left as it was
    assert (summary["schema_version"], summary["metadata"]) == (kept["schema_version"], kept["metadata"])
    assert [run["arms"] for run in summary["runs"]] == [kept["runs"][0]["arms"], {}, kept["runs"][2]["arms"], {}, {}]
    assert [{**run, "arms": None} for run in summary["runs"]] == [{**run, "arms": None} for run in kept["runs"]]
    assert release_table.verdicts_by_release(summary) == release_table.verdicts_by_release(document)


def test_the_committed_release_sweep_is_its_own_summary():
    """results/releases.json is a summary (the newest release's arms only), and the runs of that release are there
    with their arms: what tests/sdk/test_l13.py reads."""
    document = record.stored(ROOT / "results" / "releases.json")
    assert sweep_summary.summary(document) == document
    newest = [run for run in document["runs"] if run["arms"]]
    assert {sweep_summary.release(run) for run in newest} == {"2.3.0"}
    assert sorted(run["case"] for run in newest) == sorted({run["case"] for run in document["runs"]})

"""A release sweep's summary, the file a repository keeps (results/releases.json): every run as the sweep
recorded it (case, SDK, verdict, reason, headline, pairs, host contract), each arm's record only on the newest
release.

    python -m stdio_probe.report.sweep_summary releases-full.json results/releases.json

A sweep of every case on every release holds about 14 MB of arm records (proof readings, per-attempt
lists, stderr, events), too much to read in a repository: the full file is the releases workflow's artifact
(.github/workflows/releases.yml). The summary keeps what the release table and a reader need, and on the newest
release the evidence itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from packaging.version import Version

from stdio_probe.report import record
from stdio_probe.report.release_table import release


def summary(document: dict) -> dict:
    """document (a results file as written, of any version) with the arms of every run left out ({}) but those
    of the newest release's runs; nothing else changes, the schema version included."""
    releases = {version for run in document["runs"] if (version := release(run))}
    newest = max(releases, key=Version, default=None)
    runs = [run if release(run) == newest else {**run, "arms": {}} for run in document["runs"]]
    return {**document, "runs": runs}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep", type=Path, help="the results file of a sweep (--sdk all)")
    parser.add_argument("out", type=Path, help="where the summary goes")
    args = parser.parse_args(argv)
    try:
        document = record.stored(args.sweep)
    except record.ResultsError as exc:
        print(f"sweep_summary: cannot read {exc}", file=sys.stderr)
        return 2
    record.write_atomic(args.out, summary(document))
    print(f"summary of {len(document['runs'])} runs written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

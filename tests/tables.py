"""What the README's tables of real servers and real hosts share: the verdicts' short forms and the
command line that runs a table's subjects, writes its results file and prints the Markdown."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from stdio_probe.report import record

SHORT = {"reproduced": "R", "not_reproduced": "–", "not_applicable": "n/a", "inconclusive": "?", "error": "ERR"}


def main(
    argv: list[str] | None,
    description: str,
    default_out: Path,
    run: Callable[[float, list[str] | None, list[str]], dict],
    markdown: Callable[[dict], str],
    checks: list[str],
) -> int:
    """--window, --out, --only LABEL,..., --checks ID,...: one real run, its results file (validated, written
    whole), the table. A run of some checks is a shard: `merge` joins it to the table's file."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--only", help="labels, comma-separated")
    parser.add_argument("--checks", help=f"check ids, comma-separated (default: all, {','.join(checks)})")
    args = parser.parse_args(argv)
    chosen = args.checks.split(",") if args.checks else checks
    if unknown := [check for check in chosen if check not in checks]:
        parser.error(f"unknown checks {unknown}")
    document = run(args.window, args.only.split(",") if args.only else None, chosen)
    record.validate(document, str(args.out))
    record.write_atomic(args.out, document)
    print(markdown(document))
    return 0

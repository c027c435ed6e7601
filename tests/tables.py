"""What the README's tables of real servers and real hosts share: the verdicts' short forms and the
command line that runs a table's subjects, writes its results file and prints the Markdown."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from stdio_probe import record

SHORT = {"reproduced": "R", "not_reproduced": "–", "not_applicable": "n/a", "inconclusive": "?", "error": "ERR"}


def main(
    argv: list[str] | None,
    description: str,
    default_out: Path,
    run: Callable[[float, list[str] | None], dict],
    markdown: Callable[[dict], str],
) -> int:
    """--window, --out, --only LABEL,...: one real run, its results file (validated, written whole), the table."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--only", help="labels, comma-separated")
    args = parser.parse_args(argv)
    document = run(args.window, args.only.split(",") if args.only else None)
    record.validate(document, str(args.out))
    record.write_atomic(args.out, document)
    print(markdown(document))
    return 0

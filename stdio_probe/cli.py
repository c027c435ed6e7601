"""Command line: parse, check everything before spawning, run, record, report."""

from __future__ import annotations

import argparse
import datetime
import signal
import sys
from pathlib import Path

from rich.console import Console

from stdio_probe import record, report, runner, spawn
from stdio_probe.cases import CASES, arms_of
from stdio_probe.model import Options
from stdio_probe.sdk import SdkError, resolve

EXIT_OK, EXIT_USAGE, EXIT_SIGINT, EXIT_SIGTERM = 0, 2, 130, 143


class UsageError(Exception):
    """Bad input: one line for the user, exit 2, nothing spawned."""


class Terminated(Exception):
    """SIGTERM arrived; unwinds like Ctrl-C so cleanup runs."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(prog="probe_stdio_lifecycle.py", description=__doc__)
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated case ids (default: all)")
    parser.add_argument("--out", type=Path, default=Path("results.json"), help="results file (default: ./results.json)")
    parser.add_argument("--window", type=float, default=10.0, help="observation window per arm, seconds (default 10)")
    parser.add_argument(
        "--method",
        choices=("fast", "window"),
        default="fast",
        help="fast: stop on kernel proof or an observed event, arms in parallel; window: the article's fixed waits",
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    return parser.parse_args(argv)


def selected_cases(only: str) -> list[str]:
    ids = [part.strip().upper() for part in only.split(",") if part.strip()]
    if not ids:
        raise UsageError("--only selects no case")
    unknown = [i for i in ids if i not in CASES]
    if unknown:
        raise UsageError(f"unknown case {', '.join(unknown)} (known: {', '.join(CASES)})")
    return list(dict.fromkeys(ids))


def check_host() -> None:
    if not sys.platform.startswith("linux"):
        raise UsageError(f"this probe needs Linux /proc and pipe semantics; this host is {sys.platform}")
    try:
        Path("/proc/self/stat").read_text()
    except OSError as exc:
        raise UsageError(f"/proc is not readable: {exc}") from None


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Run the probe; every exit path, a signal included, reaps what the run spawned."""
    errors = Console(stderr=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _run(sys.argv[1:] if argv is None else argv, errors)
    except KeyboardInterrupt:
        spawn.reap_all()
        errors.print("interrupted: every process reaped, no results written")
        return EXIT_SIGINT
    except Terminated:
        spawn.reap_all()
        errors.print("terminated: every process reaped, no results written")
        return EXIT_SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
        spawn.reap_all()


def _run(argv: list[str], errors: Console) -> int:
    console = Console()
    try:
        args = parse_args(argv)
        if args.list:
            for case_id, case in CASES.items():
                console.print(f"{case_id}  {case.TITLE}")
            return EXIT_OK
        check_host()
        case_ids = selected_cases(args.only)
        if not args.window > 0:
            raise UsageError("--window must be a positive number of seconds")
        try:
            record.check_writable(args.out)
        except OSError as exc:
            raise UsageError(f"--out: {exc}") from None
        sdk = resolve()
    except (UsageError, SdkError) as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        return EXIT_USAGE

    options = Options(window=args.window, method=args.method)
    started = datetime.datetime.now(datetime.UTC)
    rows = [(sdk.spec, case_id, arm) for case_id in case_ids for arm in arms_of(case_id)]
    with report.LiveArms(console, rows) as live:
        runs = runner.run_matrix([sdk], case_ids, options, live)
    leftovers = spawn.reap_all()
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": leftovers}
    record.write_atomic(args.out, record.results(meta, runs))
    console.print(report.summary(runs))
    if leftovers:
        errors.print(f"[bold red]warning: {leftovers} fixture processes outlived their arms and were reaped[/]")
    console.print(f"results written to {args.out}")
    return EXIT_OK

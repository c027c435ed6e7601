"""Command line: parse, check everything before spawning, run, record, report."""

from __future__ import annotations

import argparse
import datetime
import signal
import sys
from pathlib import Path

from rich.console import Console

from stdio_probe import envs, expect, record, report, runner, sdk, spawn
from stdio_probe.cases import CASES, arms_of
from stdio_probe.model import Options, Sdk
from stdio_probe.sdk import SdkError

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_SIGINT, EXIT_SIGTERM = 0, 1, 2, 130, 143
# --bisect speaks git bisect run: 0 good, 1 bad, 125 skip (cannot tell), above 127 abort the bisection.
BISECT_GOOD, BISECT_BAD, BISECT_SKIP, BISECT_ABORT = 0, 1, 125, 128


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
    parser.add_argument(
        "--sdk",
        help="comma-separated mcp versions from PyPI and/or local SDKs (a python-sdk checkout or an mcp wheel), "
        "each run in an environment of its own (default: this interpreter's pinned mcp)",
    )
    parser.add_argument("--python", help="also run against this interpreter, with the mcp it already has")
    parser.add_argument(
        "--env-dir",
        type=Path,
        default=envs.default_cache(),
        help=f"where SDK environments are kept and reused (default: {envs.default_cache()})",
    )
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument("--expect", type=Path, help="expected verdicts (JSON); exit 1 on a mismatch or a stale entry")
    gate.add_argument(
        "--bisect",
        action="store_true",
        help="one case, one SDK: exit 0 not reproduced, 1 reproduced, 125 cannot tell (for git bisect run)",
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


def prepare_sdks(
    requests: list[sdk.Request], env_dir: Path, case_ids: list[str], errors: Console
) -> tuple[list[Sdk], list[dict]]:
    """Make every SDK ready; one that fails becomes error runs, unless it is the only one (then SdkError)."""
    ready, failed = [], []
    for request in requests:
        if request.source != "interpreter":
            errors.print(f"preparing SDK {request.spec} in {env_dir} ...", highlight=False, markup=False)
        try:
            ready.append(sdk.resolve(request, env_dir))
        except SdkError as exc:
            if len(requests) == 1:
                raise
            errors.print(f"error: {exc}", highlight=False, markup=False)
            failed += runner.unavailable(request.spec, {"source": request.source}, case_ids, f"SDK unavailable: {exc}")
    return ready, failed


def bisect_code(runs: list[dict]) -> int:
    """The one run's verdict in git bisect run's terms."""
    return {"reproduced": BISECT_BAD, "not_reproduced": BISECT_GOOD}.get(runs[0]["verdict"], BISECT_SKIP)


def entry_point() -> None:
    """The console script, python -m stdio_probe and probe_stdio_lifecycle.py."""
    sys.exit(main())


def main(argv: list[str] | None = None) -> int:
    """Run the probe; every exit path, a signal included, reaps what the run spawned."""
    errors = Console(stderr=True, soft_wrap=True)
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
    bisecting = "--bisect" in argv
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
        requests = sdk.requests(args.sdk, args.python)
        if args.bisect and (len(case_ids) != 1 or len(requests) != 1):
            raise UsageError("--bisect needs exactly one case (--only) and one SDK")
        expected = expect.load(args.expect) if args.expect else None
    except (UsageError, SdkError, expect.ExpectationError) as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        return BISECT_ABORT if bisecting else EXIT_USAGE
    try:
        sdks, failed = prepare_sdks(requests, args.env_dir, case_ids, errors)
    except SdkError as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        return BISECT_SKIP if args.bisect else EXIT_USAGE

    options = Options(window=args.window, method=args.method)
    started = datetime.datetime.now(datetime.UTC)
    rows = [(s.spec, case_id, arm) for s in sdks for case_id in case_ids for arm in arms_of(case_id)]
    with report.LiveArms(console, rows) as live:
        runs = runner.run_matrix(sdks, case_ids, options, live) + failed
    leftovers = spawn.reap_all()
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": leftovers}
    record.write_atomic(args.out, record.results(meta, runs))
    console.print(report.summary(runs))
    if leftovers:
        errors.print(f"[bold red]warning: {leftovers} fixture processes outlived their arms and were reaped[/]")
    console.print(f"results written to {args.out}")
    if args.bisect:
        return bisect_code(runs)
    if expected is not None:
        problems = expect.problems(expected, runs, case_ids)
        for line in problems:
            errors.print(f"expectation: {line}", highlight=False, markup=False)
        return EXIT_MISMATCH if problems else EXIT_OK
    return EXIT_OK

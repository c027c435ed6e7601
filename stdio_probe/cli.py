"""Command line: parse, check everything before spawning, run, record, report (or compare, list, merge)."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from stdio_probe import (
    ci_output,
    compare,
    env_args,
    envs,
    expect,
    record,
    report,
    runner,
    sdk,
    server_args,
    spawn,
    usage,
)
from stdio_probe.cases import CASES, arms_of
from stdio_probe.checks import CHECKS
from stdio_probe.hosts import HOST_CHECKS
from stdio_probe.model import ChildEnv, Options, Sdk
from stdio_probe.record import ResultsError
from stdio_probe.sdk import SdkError

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_UNDECIDED, EXIT_SIGINT, EXIT_SIGTERM = 0, 1, 2, 3, 130, 143
EXIT_INTERNAL = 4  # the probe itself failed (a full disk, a closed stdout, a bug): never 1, which is "mismatch"
WINDOW_CAP = 3600.0  # seconds: every wait derives from the window, so it is finite and capped
STDOUT = "-"  # --out -: results.json on stdout, the report on stderr
# --bisect speaks git bisect run: 0 good, 1 bad, 125 skip (cannot tell), above 127 abort the bisection.
BISECT_GOOD, BISECT_BAD, BISECT_SKIP, BISECT_ABORT = 0, 1, 125, 128


class UsageError(Exception):
    """Bad input: one line for the user, exit 2, nothing spawned."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds the main thread so the run is cut short (spawn.stop).

    A BaseException, as KeyboardInterrupt is: no `except Exception` in the probe may swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_signalled: list[int] = []  # the first SIGINT or SIGTERM of this run; any later one is ignored


def _on_signal(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM raises Interrupted; a second (Ctrl-C pressed again) does nothing, so
    no exception is raised inside the cleanup the first one started."""
    if _signalled:
        return
    _signalled.append(signum)
    raise Interrupted(signum)


def _seconds(text: str) -> float:
    """A duration option: a finite number of seconds above 0, at most WINDOW_CAP."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= WINDOW_CAP:  # nan and inf fail too
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {WINDOW_CAP:g} seconds, not {text}")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(
        prog=usage.PROG,
        usage=usage.USAGE,
        description=usage.DESCRIPTION,
        epilog=usage.epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="the probe's version and the mcp it pins, then exit")
    parser.add_argument(
        "--only", metavar="IDS", help="comma-separated case ids, or with --server check ids (default: all)"
    )
    parser.add_argument(
        "--out",
        metavar="PATH",
        default="results.json",
        help="results file, - for stdout (report on stderr); default: ./results.json",
    )
    parser.add_argument(
        "--window",
        metavar="SECONDS",
        type=_seconds,
        default=10.0,
        help=f"observation window per arm, seconds (default 10, at most {WINDOW_CAP:g})",
    )
    parser.add_argument(
        "--method",
        choices=("fast", "window"),
        default="fast",
        help="fast: stop on kernel proof or an observed event, arms in parallel; window: the article's fixed waits",
    )
    parser.add_argument(
        "--sdk",
        metavar="SPECS",
        help="comma-separated mcp versions from PyPI (2.3.0 or v2.3.0) and/or local SDKs (a python-sdk checkout, "
        "PATH@REF for a commit of one, or an mcp wheel), each run in an environment of its own "
        "(default: this interpreter's pinned mcp)",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="also run against this interpreter, with the mcp it already has"
    )
    parser.add_argument(
        "--env-dir",
        metavar="DIR",
        type=Path,
        default=envs.default_cache(),
        help=f"where SDK environments are kept and reused (default: {envs.default_cache()})",
    )
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument(
        "--expect",
        metavar="FILE",
        type=Path,
        help="expected verdicts (JSON): exit 1 on a mismatch, 3 on a run undecided",
    )
    gate.add_argument(
        "--bisect",
        action="store_true",
        help="one case, one SDK: exit 0 not reproduced, 1 reproduced, 125 cannot tell (for git bisect run)",
    )
    parser.add_argument(
        "--bisect-na",
        choices=tuple(BISECT_NA),
        default="skip",
        help="with --bisect, how a commit where the case does not apply counts: skip (default), good (date a "
        "defect that appears with its API), bad (date the commit where the case stopped applying)",
    )
    server_args.add_arguments(parser)
    env_args.add_arguments(parser)
    _add_output_arguments(parser)
    return parser.parse_args(argv)


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """What a run (or --merge) writes besides results.json, and the modes that run nothing."""
    output = parser.add_argument_group("report and CI output")
    output.add_argument("-v", "--verbose", action="store_true", help="the summary with every arm's evidence in full")
    output.add_argument("--svg", type=Path, metavar="PATH", help="also save the summary as an SVG image")
    output.add_argument("--junit", type=Path, metavar="PATH", help="also write a JUnit XML file (a testcase per case)")
    output.add_argument("--write-expect", type=Path, metavar="FILE", help="write the verdicts as an --expect file")
    output.add_argument("--markdown", action="store_true", help="--compare: print the changes as markdown")
    modes = parser.add_argument_group("modes that run no case").add_mutually_exclusive_group()
    modes.add_argument("--list", action="store_true", help="list the cases and exit")
    modes.add_argument(
        "--list-matrix", action="store_true", help="print the selection (--only, --sdk) as a CI matrix (JSON) and exit"
    )
    modes.add_argument(
        "--compare", nargs=2, type=Path, metavar=("OLD", "NEW"), help="the verdict changes between two results files"
    )
    modes.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar=("OUT", "IN"),
        help="merge results files (shards) into OUT, then report, gate and write as a run does",
    )


def selected_cases(only: str | None, known: dict = CASES) -> list[str]:
    """The ids --only selects among known (the cases, or the server checks); all of them without --only."""
    if only is None:
        return list(known)
    ids = [part.strip().upper() for part in only.split(",") if part.strip()]
    if not ids:
        raise UsageError("--only selects no case")
    unknown = [i for i in ids if i not in known]
    if unknown:
        what = {id(CASES): "case", id(CHECKS): "check (with --server)"}.get(id(known), "check (with --host)")
        raise UsageError(f"unknown {what} {', '.join(unknown)} (known: {', '.join(known)})")
    return list(dict.fromkeys(ids))


def check_host() -> None:
    if not sys.platform.startswith("linux"):
        raise UsageError(f"this probe needs Linux /proc and pipe semantics; this host is {sys.platform}")
    try:
        Path("/proc/self/stat").read_text()
    except OSError as exc:
        raise UsageError(f"/proc is not readable: {exc}") from None


PREPARE_PARALLEL = 4  # environments made at once: uv waits on the network and the disk more than on a core


def prepare_sdks(
    requests: list[sdk.Request], env_dir: Path, case_ids: list[str], errors: Console
) -> tuple[list[Sdk], list[dict]]:
    """Make every SDK ready (PREPARE_PARALLEL at a time, in the order asked); one that fails becomes error
    runs, unless it is the only one (then SdkError). An interruption stops every environment command."""
    made = [r for r in requests if r.source != "interpreter"]
    if made:
        at_once = f", {min(PREPARE_PARALLEL, len(made))} at a time" if len(made) > 1 else ""
        names = made[0].spec if len(made) == 1 else f"{len(made)} SDKs"
        errors.print(f"preparing {names} in {env_dir}{at_once} ...", highlight=False, markup=False)
    with ThreadPoolExecutor(max_workers=PREPARE_PARALLEL) as pool:
        futures = [pool.submit(_prepare_one, request, env_dir) for request in requests]
        try:
            outcomes = [future.result() for future in futures]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            envs.stop_all()
            raise
    ready, failed = [], []
    for request, outcome in zip(requests, outcomes, strict=True):
        if isinstance(outcome, Sdk):
            ready.append(outcome)
            continue
        if len(requests) == 1:
            raise outcome
        errors.print(f"error: {outcome}", highlight=False, markup=False)
        facts = {"source": request.source}
        failed += runner.unavailable(request.spec, facts, case_ids, f"SDK unavailable: {outcome}")
    return ready, failed


def _prepare_one(request: sdk.Request, env_dir: Path) -> Sdk | SdkError:
    try:
        return sdk.resolve(request, env_dir)
    except SdkError as exc:
        return exc


BISECT_NA = {"skip": BISECT_SKIP, "good": BISECT_GOOD, "bad": BISECT_BAD}


def bisect_code(runs: list[dict], not_applicable: str = "skip") -> int:
    """The one run's verdict in git bisect run's terms; not_applicable counts as --bisect-na says.

    A skip can never mark a boundary: a case that appears with its API (not_applicable, then
    reproduced) is dated only when the commits without the API count as good.
    """
    verdict = runs[0]["verdict"]
    if verdict == "not_applicable":
        return BISECT_NA[not_applicable]
    return {"reproduced": BISECT_BAD, "not_reproduced": BISECT_GOOD}.get(verdict, BISECT_SKIP)


def bisect_unavailable(request: sdk.Request, case_ids: list[str], exc: SdkError, out: str, errors: Console) -> int:
    """A bisection step whose SDK cannot be made ready: a results file whose run says why, then skip (125)."""
    facts = {"source": request.source}
    if request.source == "path":
        facts |= {"commit": request.commit} if request.commit else sdk.tree_commit(Path(request.target))
    runs = runner.unavailable(request.spec, facts, case_ids, f"SDK unavailable: {exc}")
    options = Options()
    meta = record.metadata(options, record.main_argv(), datetime.datetime.now(datetime.UTC))
    meta["leftover_processes"] = 0  # no case ran: no fixture process was started
    errors.print(write_results(out, record.results(meta, runs)), highlight=False, markup=False)
    errors.print(bisect_line(runs[0], BISECT_SKIP), highlight=False, markup=False)
    return BISECT_SKIP


def bisect_line(run: dict, code: int) -> str:
    """--bisect's last line: the case, the SDK (its version and commit when known), the verdict, the exit code."""
    facts = run["sdk"]
    named = [f"mcp {facts['version']}"] if facts.get("version") else []
    named += [f"commit {facts['commit'][:12]}"] if facts.get("commit") else []
    subject = ", ".join(named) or facts["spec"]
    why = "" if run["verdict"] in ("reproduced", "not_reproduced") else f" ({run['reason']})"
    return f"bisect: {run['case']} on {subject}: {run['verdict']}{why}, exit {code}"


def entry_point() -> None:
    """The console script, python -m stdio_probe and probe_stdio_lifecycle.py.

    The process ends with os._exit: an interrupted run leaves arm threads that may still be inside a
    bounded wait (their servers are already killed), and interpreter shutdown would join them; and a
    closed stdout must not print a traceback when Python flushes it at exit.
    """
    code = main()
    try:
        sys.stdout.flush()
    except OSError:
        code = code or EXIT_INTERNAL
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the probe; every exit path, a signal included, reaps what the run spawned.

    A failure of the probe itself (an OSError such as a full disk or a closed stdout, or any bug) is one
    line on stderr and EXIT_INTERNAL, never a traceback.
    """
    errors = Console(stderr=True, soft_wrap=True)
    _signalled.clear()
    # a signal ignored at start (SIGINT in a background job) stays ignored
    watched = [sig for sig in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(sig) != signal.SIG_IGN]
    previous = {sig: signal.signal(sig, _on_signal) for sig in watched}
    try:
        return _run(sys.argv[1:] if argv is None else argv, errors)
    except Interrupted as exc:
        if not spawn.stopping():  # the runner stops the run itself when the signal reaches it there
            spawn.stop()
        what = "interrupted" if exc.signum == signal.SIGINT else "terminated"
        _say(errors, f"{what}: every process reaped, no results written")
        return EXIT_SIGINT if exc.signum == signal.SIGINT else EXIT_SIGTERM
    except OSError as exc:
        _say(errors, f"error: {exc}")
        return EXIT_INTERNAL
    except Exception as exc:  # a bug of the probe: still one line, still a distinct code
        _say(errors, f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
    finally:
        try:
            if not spawn.stopping():
                spawn.reap_all()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _say(errors: Console, line: str) -> None:
    """One line on stderr, which may itself be closed."""
    with contextlib.suppress(OSError):
        errors.print(line, highlight=False, markup=False)


def _run(argv: list[str], errors: Console) -> int:
    bisecting = "--bisect" in argv
    try:
        args = parse_args(argv)
        console = Console(stderr=args.out == STDOUT)
        if args.version:
            print(usage.version())
            return EXIT_OK
        if args.list:
            for case_id, case in {**CASES, **CHECKS, **HOST_CHECKS}.items():
                console.print(f"{case_id}  {case.TITLE}", highlight=False, markup=False)
            return EXIT_OK
        if (args.env or args.inherit_env) and not args.servers:
            raise UsageError("--env and --inherit-env go with --server (an SDK's fixtures get what they need)")
        if args.markdown and not args.compare:
            raise UsageError("--markdown goes with --compare")
        if args.compare:
            return compare_files(*args.compare, args.markdown, console)
        if args.merge:
            return merge_files(args, console, errors)
        check_host()
        if any(entry["kind"] == "host" for entry in args.servers):
            return run_hosts(args, console, errors)
        if args.servers:
            return run_servers(args, console, errors)
        case_ids = selected_cases(args.only)
        requests = sdk.requests(args.sdk, args.python, args.env_dir)
        if args.list_matrix:
            print(json.dumps(compare.matrix(requests, case_ids)))
            return EXIT_OK
        check_outputs(args)
        if args.bisect and (len(case_ids) != 1 or len(requests) != 1):
            raise UsageError("--bisect needs exactly one case (--only) and one SDK")
        if args.bisect_na != "skip" and not args.bisect:
            raise UsageError("--bisect-na goes with --bisect")
        expected = expect.load(args.expect) if args.expect else None
    except (
        UsageError,
        SdkError,
        expect.ExpectationError,
        ResultsError,
        server_args.ServerArgsError,
        env_args.EnvArgsError,
    ) as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        return BISECT_ABORT if bisecting else EXIT_USAGE
    try:
        sdks, failed = prepare_sdks(requests, args.env_dir, case_ids, errors)
    except SdkError as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        if not args.bisect:
            return EXIT_USAGE
        return bisect_unavailable(requests[0], case_ids, exc, args.out, errors)

    options = Options(window=args.window, method=args.method)
    rows = [(s.spec, case_id, arm) for s in sdks for case_id in case_ids for arm in arms_of(case_id)]
    code = record_and_finish(
        lambda live: runner.run_matrix(sdks, case_ids, options, live) + failed,
        rows, options, Gate(case_ids, expected), args, (console, errors),
    )
    return code or (EXIT_OK if sdks else EXIT_INTERNAL)  # no SDK could be made ready: nothing was probed


def record_and_finish(
    run: Callable[[report.LiveArms], list[dict]],
    rows: list[tuple[str, str, str]],
    options: Options,
    gate: Gate,
    args: argparse.Namespace,
    consoles: tuple[Console, Console],
    env: ChildEnv | None = None,
) -> int:
    """run(live view) -> runs; then reap, write results.json, report, gate: the end of every run.

    Everything shown or written comes from the runs with env's values (--env) redacted."""
    console, errors = consoles
    env = env or ChildEnv()
    started = datetime.datetime.now(datetime.UTC)
    with report.LiveArms(console, rows) as live:

        def shown(subject: str, case: str, arm: str, status: str, note: str) -> None:
            live(subject, case, arm, status, env_args.redact(note, env))

        runs = run(shown)
    leftovers = spawn.reap_all()
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": leftovers}
    document = env_args.redact(record.results(meta, runs), env)
    runs = document["runs"]
    written = write_results(args.out, document)
    if leftovers:
        errors.print(f"[bold red]warning: {leftovers} fixture processes outlived their arms and were reaped[/]")
    code = finish(runs, gate, args, written, (console, errors))
    if not args.bisect:
        return code
    code = bisect_code(runs, args.bisect_na)
    errors.print(bisect_line(runs[0], code), highlight=False, markup=False)
    return code


def run_servers(args: argparse.Namespace, console: Console, errors: Console) -> int:
    """--server: the checks S1-S11 on each server; bad input raises before anything is spawned."""
    for option, given in (("--sdk", args.sdk), ("--python", args.python), ("--list-matrix", args.list_matrix)):
        if given:
            raise UsageError(f"{option} does not go with --server (the checks need no SDK)")
    check_ids = selected_cases(args.only, CHECKS)
    env = env_args.resolve(args.env, args.inherit_env)
    servers = server_args.servers(args.servers, env)
    check_outputs(args)
    if args.bisect and (len(check_ids) != 1 or len(servers) != 1):
        raise UsageError("--bisect needs exactly one check (--only) and one server")
    expected = expect.load(args.expect) if args.expect else None
    options = Options(window=args.window, method=args.method)
    rows = [(s.label, *runner.ERA_ROW) for s in servers if s.protocol is None]
    rows += [(s.label, check_id, arm) for s in servers for check_id in check_ids for arm in CHECKS[check_id].ARMS]
    return record_and_finish(
        lambda live: runner.run_servers(servers, check_ids, options, live),
        rows, options, Gate(check_ids, expected), args, (console, errors), env,
    )


def run_hosts(args: argparse.Namespace, console: Console, errors: Console) -> int:
    """--host: the checks H1-H10 on each host; bad input raises before anything is spawned."""
    for option, given in (("--sdk", args.sdk), ("--python", args.python), ("--bisect", args.bisect)):
        if given:
            raise UsageError(f"{option} does not go with --host")
    if any(entry["kind"] == "command" for entry in args.servers):
        raise UsageError("--server and --host are separate runs")
    check_ids = selected_cases(args.only, HOST_CHECKS)
    if not args.window > 0:
        raise UsageError("--window must be a positive number of seconds")
    env = env_args.resolve(args.env, args.inherit_env)
    hosts = server_args.hosts(args.servers, env)
    if args.list_matrix:
        print(json.dumps(compare.host_matrix(hosts, check_ids)))
        return EXIT_OK
    check_outputs(args)
    expected = expect.load(args.expect) if args.expect else None
    options = Options(window=args.window, method=args.method)
    rows = [
        (h.label, check_id, arm)
        for h in hosts
        for check_id in check_ids
        for arm in HOST_CHECKS[check_id].ARMS
        if arm != runner.SHARED_CONTROL
    ]
    rows += [(h.label, check_ids[0], runner.SHARED_CONTROL) for h in hosts]
    return record_and_finish(
        lambda live: runner.run_hosts(hosts, check_ids, options, live),
        rows, options, Gate(check_ids, expected), args, (console, errors), env,
    )


def check_outputs(args: argparse.Namespace) -> None:
    """Every file the run will write can be written: checked before anything is spawned."""
    targets = {"--out": None if args.out == STDOUT or args.merge else Path(args.out)}
    targets |= {"--svg": args.svg, "--junit": args.junit, "--write-expect": args.write_expect}
    for option, path in targets.items():
        if path is None:
            continue
        try:
            record.check_writable(path)
        except OSError as exc:
            raise UsageError(f"{option}: {exc}") from None


def write_results(out: str, document: dict) -> str:
    """Write the results file (or stdout for -); what to tell the user."""
    if out == STDOUT:
        sys.stdout.write(record.dumps(document))
        sys.stdout.flush()
        return "results written to stdout"
    record.write_atomic(Path(out), document)
    return f"results written to {out}"


@dataclass(frozen=True)
class Gate:
    """What --expect checks: the cases in scope, and the expectations (None without --expect)."""

    case_ids: list[str]
    expected: dict | None


def finish(
    runs: list[dict], gate: Gate, args: argparse.Namespace, written: str, consoles: tuple[Console, Console]
) -> int:
    """After the runs are recorded (by a run or --merge): report, CI output, expectations, and the exit code."""
    console, errors = consoles
    summary = report.summary(runs, args.verbose)
    report.print_lines(console, summary)
    console.print(written, highlight=False, markup=False)
    if args.svg:
        report.save_svg(summary, args.svg, console.width)
    problems = None if gate.expected is None else expect.problems(gate.expected, runs, gate.case_ids)
    if args.junit:
        ci_output.write_junit(args.junit, runs, problems)
    ci_output.publish_github(runs, problems, console.file)
    if args.write_expect:
        record.write_text_atomic(args.write_expect, record.dumps(expect.expectations(runs)))
        console.print(f"expectations written to {args.write_expect}", highlight=False, markup=False)
    for problem in problems or ():
        errors.print(f"expectation: {problem.line}", highlight=False, markup=False)
    kinds = {problem.kind for problem in problems or ()}
    if kinds & {"mismatch", "stale"}:
        return EXIT_MISMATCH
    return EXIT_UNDECIDED if kinds else EXIT_OK


def compare_files(old: Path, new: Path, as_markdown: bool, console: Console) -> int:
    """--compare OLD NEW: exit 1 when a verdict changed, like diff."""
    found, same = compare.changes(record.read(old), record.read(new))
    names = (str(old), str(new))
    if as_markdown:
        print(compare.markdown(found, same, names), end="")
    else:
        report.print_lines(console, compare.table(found, same, names))
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_STEP_SUMMARY"):
        ci_output.append_step_summary(
            os.environ["GITHUB_STEP_SUMMARY"], compare.markdown(found, same, names), sys.stdout
        )
    return EXIT_MISMATCH if found else EXIT_OK


def merge_files(args: argparse.Namespace, console: Console, errors: Console) -> int:
    """--merge OUT IN...: the shards' runs in one validated results file, then the output stage of a run.

    --only is the scope of --expect, as in a run: by default every case (every server or host check when
    the shards hold only those), so an expected case that no shard reported is a stale entry.
    """
    if len(args.merge) < 2:
        raise UsageError("--merge needs OUT and at least one results file to merge")
    out, inputs = args.merge[0], args.merge[1:]
    if out in inputs:
        raise UsageError(f"--merge: {out} is both the output and an input")
    try:
        record.check_writable(out)
    except OSError as exc:
        raise UsageError(f"--merge: {exc}") from None
    check_outputs(args)
    expected = expect.load(args.expect) if args.expect else None
    merged = compare.merge(inputs, record.main_argv())
    kinds = {"host" if "host" in run else "server" if "server" in run else "sdk" for run in merged["runs"]}
    known = HOST_CHECKS if kinds == {"host"} else CHECKS if kinds == {"server"} else CASES
    gate = Gate(selected_cases(args.only, known), expected)
    record.write_atomic(out, merged)
    written = f"merged {len(inputs)} files ({len(merged['runs'])} runs) into {out}"
    return finish(merged["runs"], gate, args, written, (console, errors))

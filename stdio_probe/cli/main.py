"""Command line: check everything before spawning, then run the command.

One table, COMMANDS, holds every subcommand: the options it takes (commands.py builds them; its parser comes
from this table), the function that runs it, whether it spawns (Linux only) and, for one that records, the files
it writes (checked, and its --expect loaded, before anything runs, here and nowhere else). run, server and host
hand their runner.Subject to record_and_finish: the live view's rows and the run come from that one subject.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from stdio_probe.cli import commands, start, usage
from stdio_probe.cli.commands import UsageError
from stdio_probe.core import env_args, runner, spawn
from stdio_probe.core.model import Options, Sdk, printable, printable_all
from stdio_probe.core.outcome import (
    BISECT_ABORT,
    BISECT_BAD,
    BISECT_GOOD,
    BISECT_SKIP,
    EXIT_INTERNAL,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_USAGE,
    MEANING,
    exit_code,
)
from stdio_probe.report import ci_output, compare, expect, html, record, report
from stdio_probe.report.record import ResultsError, Run
from stdio_probe.sdk import envs, sdk
from stdio_probe.sdk.sdk import SdkError
from stdio_probe.server import args as server_args

STDOUT = "-"  # --out -: results.json on stdout, the report on stderr


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: unwinds the main thread so the run is cut short (its Supervisor's stop).

    A BaseException, as KeyboardInterrupt is: no `except Exception` in the probe may swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM raises Interrupted; a second (Ctrl-C pressed again) does nothing, so
    no exception is raised inside the cleanup the first one started."""
    if start.received:
        return
    start.received.append(signum)
    raise Interrupted(signum)


def selected_cases(only: str | None, kind: runner.Kind) -> list[str]:
    """The ids --only selects among the probes of a kind of subject; all of them without --only."""
    known = kind.probes
    if only is None:
        return list(known)
    ids = [part.strip().upper() for part in only.split(",") if part.strip()]
    if not ids:
        raise UsageError("--only selects no case")
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f"unknown {kind.what} {', '.join(unknown)} (known: {', '.join(known)})")
    return list(dict.fromkeys(ids))


def bisecting(args: argparse.Namespace) -> str | None:
    """How --bisect counts a commit where the case does not apply (--bisect-na), None when not bisecting;
    --bisect-na without --bisect is bad input. Only run and server take --bisect."""
    if args.bisect_na != "skip" and not args.bisect:
        raise UsageError("--bisect-na goes with --bisect")
    return args.bisect_na if args.bisect else None


def check_host() -> None:
    if not sys.platform.startswith("linux"):
        raise UsageError(f"this probe needs Linux /proc and pipe semantics; this host is {sys.platform}")
    try:
        Path("/proc/self/stat").read_text()
    except OSError as exc:
        raise UsageError(f"/proc is not readable: {exc}") from None
    try:  # every signal goes through a pidfd: without them nothing could be stopped, and waits after a kill hang
        os.close(os.pidfd_open(os.getpid()))
    except OSError as exc:
        raise UsageError(f"this kernel has no pidfd_open (Linux 5.3 and later): {exc}") from None


PREPARE_PARALLEL = 4  # environments made at once: uv waits on the network and the disk more than on a core
PREPARE_STOP_BOUND = 1.0  # seconds an interrupted preparation waits for its jobs to clean up after their commands


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
    envs.allow_commands()
    pool = ThreadPoolExecutor(max_workers=PREPARE_PARALLEL)
    futures: list = []
    try:
        futures += [pool.submit(_prepare_one, request, env_dir) for request in requests]
        outcomes = [future.result() for future in futures]
    except BaseException:
        envs.stop_all()  # first: what runs is killed and nothing more starts, so the jobs end at once
        pool.shutdown(wait=False, cancel_futures=True)
        wait(futures, timeout=PREPARE_STOP_BOUND)  # each removes what it half made; a longer one is left to the exit
        raise
    pool.shutdown()
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


BISECT_NA = dict(zip(commands.BISECT_NA, (BISECT_SKIP, BISECT_GOOD, BISECT_BAD), strict=True))


def bisect_code(runs: list[dict], not_applicable: str = "skip") -> int:
    """The one run's verdict in git bisect run's terms; not_applicable counts as --bisect-na says.

    A skip can never mark a boundary: a case that appears with its API (not_applicable, then
    reproduced) is dated only when the commits without the API count as good.
    """
    code = MEANING[runs[0]["verdict"]].bisect
    return BISECT_NA[not_applicable] if code is None else code


def bisect_unavailable(request: sdk.Request, case_ids: list[str], exc: SdkError, out: str, context: Context) -> int:
    """A bisection step whose SDK cannot be made ready: a results file whose run says why, then skip (125)."""
    facts = {"source": request.source}
    if request.source == "path":
        facts |= {"commit": request.commit} if request.commit else sdk.tree_commit(Path(request.target))
    runs = runner.unavailable(request.spec, facts, case_ids, f"SDK unavailable: {exc}")
    options = Options()
    meta = record.metadata(options, record.main_argv(), datetime.datetime.now(datetime.UTC))
    meta["leftover_processes"] = 0  # no case ran: no fixture process was started
    written = write_results(out, context.redact(record.results(meta, runs)))
    context.errors.print(written, highlight=False, markup=False)
    context.errors.print(bisect_line(runs[0], BISECT_SKIP), highlight=False, markup=False)
    return BISECT_SKIP


def bisect_line(run: dict, code: int) -> str:
    """--bisect's last line: the case, the SDK (its version and commit when known), the verdict, the exit code."""
    facts = run["sdk"]
    named = [f"mcp {facts['version']}"] if facts.get("version") else []
    named += [f"commit {facts['commit'][:12]}"] if facts.get("commit") else []
    subject = ", ".join(named) or facts["spec"]
    why = "" if MEANING[run["verdict"]].defect is not None else f" ({run['reason']})"
    return printable(f"bisect: {run['case']} on {subject}: {run['verdict']}{why}, exit {code}")


def entry_point() -> None:
    """The CLI of every entry point (start.main, which put its signal handlers in place first).

    The process ends with os._exit: an interrupted run leaves arm threads that may still be inside a
    bounded wait (their servers are already killed), and interpreter shutdown would join them; and a
    closed stdout must not print a traceback when Python flushes it at exit.
    """
    try:
        code = main()
    except Interrupted as exc:  # the first signal landed as main put the handlers back: the run was over
        _say(Console(stderr=True, soft_wrap=True), f"{start.WORDS[exc.signum]}: nothing left running")
        code = start.CODES[exc.signum]
    try:
        sys.stdout.flush()
    except OSError:
        code = code or EXIT_INTERNAL
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the probe; every exit path, a signal included, reaps what the run spawned (record_and_finish's
    Supervisor, on leaving it).

    A failure of the probe itself (an OSError such as a full disk or a closed stdout, or any bug) is one
    line on stderr and EXIT_INTERNAL, never a traceback; after a signal, any failure is the signal's
    (its Interrupted may come out of an import or a thread pool as another exception).

    First the probe's environment is made unreadable to other processes (spawn.undumpable), and the run's
    one redactor built: every line printed and every record written or reported passes through it.
    """
    spawn.undumpable()
    argv = sys.argv[1:] if argv is None else argv
    redact = env_args.redactor(argv)
    errors = Console(file=env_args.MaskedStream(sys.stderr, redact), soft_wrap=True)
    start.received.clear()
    previous = {}
    try:
        try:
            for sig in start.CODES:
                if signal.getsignal(sig) != signal.SIG_IGN:  # a signal ignored at start stays ignored
                    previous[sig] = signal.signal(sig, _on_signal)
            return _run(argv, errors, redact)
        except Exception as exc:
            if start.received:
                raise Interrupted(start.received[0]) from None
            what = "error" if isinstance(exc, OSError) else f"internal error: {type(exc).__name__}"  # else a bug
            _say(errors, f"{what}: {exc}")
            return EXIT_INTERNAL
    except Interrupted as exc:
        _say(errors, f"{start.WORDS[exc.signum]}: every process reaped, no results written")
        return start.CODES[exc.signum]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _say(errors: Console, line: str) -> None:
    """One line on stderr, which may itself be closed."""
    with contextlib.suppress(OSError):
        errors.print(line, highlight=False, markup=False)


USAGE_ERRORS = (
    UsageError,
    SdkError,
    expect.ExpectationError,
    ResultsError,
    server_args.ServerArgsError,
    env_args.EnvArgsError,
)


@dataclass(frozen=True)
class Context:
    """What every command is given besides its arguments: where errors go, the expectations, the run's
    redactor (env_args.redactor), and through it the report's console."""

    errors: Console
    expected: dict | None
    redact: env_args.Redactor

    def console(self, out: str | None = None) -> Console:
        """Where the report goes: stdout, or stderr when the results file goes there (--out -)."""
        return Console(file=env_args.MaskedStream(sys.stderr if out == STDOUT else sys.stdout, self.redact))


def _run(argv: list[str], errors: Console, redact: env_args.Redactor) -> int:
    """Parse, then the command from COMMANDS; bad input anywhere before a spawn is one line and exit 2."""
    try:
        args = parse_args(argv)
        if "version" in args:  # given (run's --version): nothing else is checked or run
            print(usage.version())
            return EXIT_OK
        command = COMMANDS[args.command]
        if command.spawns:
            check_host()
        expected = None
        if command.writes is not None:
            check_outputs(command.writes(args))
            expected = expect.load(args.expect) if args.expect else None
        return command.run(args, Context(errors, expected, redact))
    except USAGE_ERRORS as exc:
        errors.print(f"error: {exc}", highlight=False, markup=False)
        return BISECT_ABORT if "--bisect" in argv else EXIT_USAGE


def parse_args(argv: list[str]) -> argparse.Namespace:
    """argv parsed by the grammar of COMMANDS (commands.Grammar)."""
    return GRAMMAR.parse(argv)


def run_sdks(args: argparse.Namespace, context: Context) -> int:
    """run: the cases on each SDK."""
    bisect_na = bisecting(args)
    case_ids = selected_cases(args.only, runner.SDK)
    requests = sdk.requests(args.sdk, args.python, args.env_dir)
    if bisect_na and (len(case_ids) != 1 or len(requests) != 1):
        raise UsageError("--bisect needs exactly one case (--only) and one SDK")
    try:
        sdks, failed = prepare_sdks(requests, args.env_dir, case_ids, context.errors)
    except SdkError as exc:
        context.errors.print(f"error: {exc}", highlight=False, markup=False)
        if not bisect_na:
            return EXIT_USAGE
        return bisect_unavailable(requests[0], case_ids, exc, args.out, context)
    code = record_and_finish(runner.Sdks(sdks, case_ids), args, context, bisect_na, failed)
    return code or (EXIT_OK if sdks else EXIT_INTERNAL)  # no SDK could be made ready: nothing was probed


def run_servers(args: argparse.Namespace, context: Context) -> int:
    """server: the server checks on each server; bad input raises before anything is spawned."""
    bisect_na = bisecting(args)
    check_ids = selected_cases(args.only, runner.SERVER)
    env = env_args.resolve(args.env, args.inherit_env)
    servers = server_args.servers(args.servers, env)
    if bisect_na and (len(check_ids) != 1 or len(servers) != 1):
        raise UsageError("--bisect needs exactly one check (--only) and one server")
    return record_and_finish(runner.Servers(servers, check_ids), args, context, bisect_na)


def run_hosts(args: argparse.Namespace, context: Context) -> int:
    """host: the host checks on each host; bad input raises before anything is spawned."""
    check_ids = selected_cases(args.only, runner.HOST)
    env = env_args.resolve(args.env, args.inherit_env)
    hosts = server_args.hosts(args.servers, env)
    return record_and_finish(runner.Hosts(hosts, check_ids), args, context, bisect_na=None)


def record_and_finish(
    subject: runner.Subject,
    args: argparse.Namespace,
    context: Context,
    bisect_na: str | None,
    failed: Sequence[Run] = (),
) -> int:
    """The subject's run (the runs of failed, SDKs that could not be made ready, after it) under a live view of
    the subject's rows; then reap (the end of the run's supervisor), write results.json, report, gate, and
    --bisect's code: the end of every run. The supervisor is made here, so that its end says how many processes
    outlived their arms; leaving its block any other way (a failure, a signal) reaps or stops the run.

    Everything shown or written comes from the runs with their secrets masked (context.redact), the live
    notes too."""
    options = Options(window=args.window, method=args.method)
    console, errors = context.console(args.out), context.errors
    started = datetime.datetime.now(datetime.UTC)
    with spawn.Supervisor() as supervisor:
        with report.LiveArms(console, subject.rows()) as live:

            def shown(label: str, case: str, arm: str, status: str, note: str) -> None:
                live(label, case, arm, status, context.redact.text(note))

            runs = [*runner.run_subject(subject, options, shown, supervisor), *failed]
        leftovers = supervisor.end()
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": leftovers}
    document = context.redact(record.results(meta, runs))
    runs = document["runs"]
    written = write_results(args.out, document)
    if leftovers:
        errors.print(f"[bold red]warning: {leftovers} fixture processes outlived their arms and were reaped[/]")
    code = finish(document, Gate(subject.probe_ids, context.expected), args, written, (console, errors))
    if bisect_na is None:
        return code
    code = bisect_code(runs, bisect_na)
    errors.print(bisect_line(runs[0], code), highlight=False, markup=False)
    return code


def print_matrix(args: argparse.Namespace, context: Context) -> int:
    """matrix: the selection as a CI matrix, of SDKs and cases, or (with --host) of hosts and host checks."""
    if args.servers:
        if args.sdk or args.python:
            raise UsageError("matrix: --host or --sdk/--python, not both")
        hosts = server_args.hosts(args.servers, env_args.resolve(args.env, args.inherit_env))
        print(context.redact.text(json.dumps(compare.host_matrix(hosts, selected_cases(args.only, runner.HOST)))))
        return EXIT_OK
    case_ids = selected_cases(args.only, runner.SDK)
    print(json.dumps(compare.matrix(sdk.requests(args.sdk, args.python, args.env_dir), case_ids)))
    return EXIT_OK


def list_probes(args: argparse.Namespace, context: Context) -> int:
    """list: every case, server check and host check, one line each."""
    console = context.console()
    for kind in runner.KINDS.values():
        for probe_id, probe in kind.probes.items():
            console.print(f"{probe_id}  {probe.title}", highlight=False, markup=False)
    return EXIT_OK


def probe_writes(args: argparse.Namespace) -> dict[str, Path | None]:
    """The files run, server and host write: results (--out, unless stdout), then the outputs of the report."""
    return {"--out": None if args.out == STDOUT else Path(args.out)} | report_writes(args)


def report_writes(args: argparse.Namespace) -> dict[str, Path | None]:
    """The files the report stage writes (finish: after a run or a merge), by option; None where not asked."""
    return {"--svg": args.svg, "--junit": args.junit, "--html": args.html, "--write-expect": args.write_expect}


def check_outputs(targets: dict[str, Path | None]) -> None:
    """Every file the command will write (option -> path) can be written: checked before anything is spawned."""
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
        sys.stdout.write(record.written(document))
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
    document: dict, gate: Gate, args: argparse.Namespace, written: str, consoles: tuple[Console, Console]
) -> int:
    """After the runs are recorded (by a run, merge or report): report, CI output, expectations, the exit code.

    Everything from here on shows the runs and expectations made printable: a server's stderr, a note or
    a label with control characters, ESC or lone surrogates reaches no terminal, XML, markdown or HTML raw;
    the page names machine paths as a results file does (record.portable)."""
    console, errors = consoles
    runs, gate = printable_all(document["runs"]), Gate(gate.case_ids, printable_all(gate.expected))
    summary = report.summary(runs, args.verbose)
    report.print_lines(console, summary)
    console.print(written, highlight=False, markup=False)
    if args.svg:
        report.save_svg(summary, args.svg, console.width)
    if args.html:
        record.write_text_atomic(args.html, html.page(record.portable(document)))
        console.print(f"page written to {args.html}", highlight=False, markup=False)
    problems = None if gate.expected is None else expect.problems(gate.expected, runs, gate.case_ids)
    if args.junit:
        ci_output.write_junit(args.junit, runs, problems)
    ci_output.publish_github(runs, problems, console.file)
    if args.write_expect:
        record.write_text_atomic(args.write_expect, record.dumps(expect.expectations(runs)))
        console.print(f"expectations written to {args.write_expect}", highlight=False, markup=False)
    for problem in problems or ():
        errors.print(f"expectation: {problem.line}", highlight=False, markup=False)
    return exit_code({problem.kind for problem in problems or ()})


def compare_files(args: argparse.Namespace, context: Context) -> int:
    """compare OLD NEW: exit 1 when a verdict changed, like diff."""
    old, new = args.compare
    console = context.console()
    found, same = compare.changes(
        printable_all(context.redact(record.read(old))), printable_all(context.redact(record.read(new)))
    )
    names = (str(old), str(new))
    if args.markdown:
        print(compare.markdown(found, same, names), end="")
    else:
        report.print_lines(console, compare.table(found, same, names))
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_STEP_SUMMARY"):
        ci_output.append_step_summary(
            os.environ["GITHUB_STEP_SUMMARY"], compare.markdown(found, same, names), sys.stdout
        )
    return EXIT_MISMATCH if found else EXIT_OK


def merge_files(args: argparse.Namespace, context: Context) -> int:
    """merge OUT IN...: the shards' runs in one validated results file, then the output stage of a run, gated as
    stored_gate says."""
    if len(args.merge) < 2:
        raise UsageError("--merge needs OUT and at least one results file to merge")
    out, inputs = args.merge[0], args.merge[1:]
    if out in inputs:
        raise UsageError(f"--merge: {out} is both the output and an input")
    try:
        record.check_writable(out)
    except OSError as exc:
        raise UsageError(f"--merge: {exc}") from None
    merged = context.redact(compare.merge(inputs, record.main_argv()))
    gate = stored_gate(merged, args, context)
    record.write_atomic(out, merged)
    written = f"merged {len(inputs)} files ({len(merged['runs'])} runs) into {out}"
    return finish(merged, gate, args, written, (context.console(), context.errors))


def report_file(args: argparse.Namespace, context: Context) -> int:
    """report FILE: a results file of any schema version (upgraded as compare reads it) through the output stage
    of a run, nothing run and nothing written but the outputs asked for: the summary (-v), --html, --svg,
    --junit, --write-expect, the gate of --expect. merge takes only files of this schema version."""
    document = context.redact(record.read(args.report))
    written = f"read {args.report} ({len(document['runs'])} runs)"
    return finish(document, stored_gate(document, args, context), args, written, (context.console(), context.errors))


def stored_gate(document: dict, args: argparse.Namespace, context: Context) -> Gate:
    """The gate of a file's runs: --only is the scope of --expect, as in a run; by default every case (every
    server or host check when the file holds only those), so an expected case no run reported is stale."""
    kinds = {"host" if "host" in run else "server" if "server" in run else "sdk" for run in document["runs"]}
    kind = runner.KINDS[kinds.pop()] if len(kinds) == 1 else runner.SDK
    return Gate(selected_cases(args.only, kind), context.expected)


@dataclass(frozen=True)
class Command:
    """A subcommand: the options its parser takes, the function that runs it, whether it spawns (Linux only),
    and, if it records (writes results, honours --expect), the files it writes by option (checked first)."""

    options: commands.AddOptions
    run: Callable[[argparse.Namespace, Context], int]
    spawns: bool
    writes: Callable[[argparse.Namespace], dict[str, Path | None]] | None = None


COMMANDS = {
    "run": Command(commands.run_options, run_sdks, spawns=True, writes=probe_writes),
    "server": Command(commands.subject_options("server", bisect=True), run_servers, spawns=True, writes=probe_writes),
    "host": Command(commands.subject_options("host", bisect=False), run_hosts, spawns=True, writes=probe_writes),
    "compare": Command(commands.compare_options, compare_files, spawns=False),
    "merge": Command(commands.merge_options, merge_files, spawns=False, writes=report_writes),
    "report": Command(commands.report_options, report_file, spawns=False, writes=report_writes),
    "matrix": Command(commands.matrix_options, print_matrix, spawns=True),
    "list": Command(commands.list_options, list_probes, spawns=False),
}
GRAMMAR = commands.Grammar({name: command.options for name, command in COMMANDS.items()})

"""The command line's grammar: the options each command takes, how argv names its command, the older flag forms.

    probe-stdio-lifecycle [run] | server | host | compare | merge | report | matrix | list   [options]

As pyperf and pip do, each command has a parser of its own (its own --help with examples); run is
the default when the first word names no command, so every form written before the subcommands
(`--only L1,L2`, `--sdk 2.2.0 --expect FILE`) still parses as it did. The older modes were flags
(--server, --host, --compare, --merge, --list-matrix, --list): ALIASES maps each onto its command,
and the flag's word is dropped so its values become the command's own arguments
(`--compare OLD NEW` is `compare OLD NEW`). An option given to a command that does not take it is
one line naming the commands that do. Nothing here runs anything: cli's one table of commands (COMMANDS)
names each command's options (the builders below) beside what runs it, and a Grammar made from it parses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path

from stdio_probe.cli import usage
from stdio_probe.core import env_args
from stdio_probe.sdk import envs
from stdio_probe.server import args as server_args

WINDOW_CAP = 3600.0  # seconds: every wait derives from the window, so it is finite and capped
# the older flag forms, in the order they are looked for: --list-matrix beside --host is a matrix of hosts
ALIASES = {
    "--list-matrix": "matrix",
    "--list": "list",
    "--compare": "compare",
    "--merge": "merge",
    "--host": "host",
    "--server": "server",
}
SWITCHES = ("matrix", "list")  # commands whose older flag is a switch: it takes no value
BISECT_NA = ("skip", "good", "bad")  # how --bisect counts a commit where the case does not apply


AddOptions = Callable[[argparse.ArgumentParser], None]  # adds a command's options to its parser


class UsageError(Exception):
    """Bad input: one line for the user, exit 2, nothing spawned."""


class _Parser(argparse.ArgumentParser):
    """Errors raise UsageError; no abbreviations: --env must not be taken for another command's --env-dir."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message: str) -> None:
        raise UsageError(message)


class Grammar:
    """The parser of every command, from the options each takes (command name -> its AddOptions, in the order the
    commands are listed): one table, so the commands parsed are the commands run."""

    def __init__(self, options: Mapping[str, AddOptions]) -> None:
        self.options = options

    def parse(self, argv: list[str]) -> argparse.Namespace:
        """argv -> the Namespace of its command (args.command) and of its own options only; UsageError on bad
        input."""
        command, rest, named = self.split(argv)
        args, extra = self.build(command).parse_known_args(rest)
        if extra:
            raise UsageError(self._misplaced(extra, command, named, argv))
        return args

    def split(self, argv: list[str]) -> tuple[str, list[str], str]:
        """(the command, its arguments, how the user named it): the first word, an older flag form, or run."""
        if argv and argv[0] in self.options:
            return argv[0], argv[1:], argv[0]
        for flag, command in ALIASES.items():
            for at, word in enumerate(argv):
                if word == flag:
                    return command, argv[:at] + argv[at + 1 :], flag
                if word.startswith(f"{flag}=") and command not in SWITCHES:
                    return command, [*argv[:at], word.partition("=")[2], *argv[at + 1 :]], flag
        return "run", argv, "run"

    def build(self, command: str) -> argparse.ArgumentParser:
        """The parser of one command, with its --help; args.command says which command parsed."""
        if command == "run":
            parser = _Parser(
                prog=usage.PROG,
                usage=usage.USAGE,
                description=usage.DESCRIPTION,
                epilog=usage.epilog(),
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        else:
            text = usage.command_help(command)
            parser = _Parser(
                prog=f"{usage.PROG} {command}",
                usage=text.usage,
                description=text.description,
                epilog=text.epilog,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        self.options[command](parser)
        parser.set_defaults(command=command)
        return parser

    def _misplaced(self, extra: list[str], command: str, named: str, argv: list[str]) -> str:
        """The one line for words the command does not take: which commands take the option, or an unknown
        command."""
        word = extra[0]
        if not word.startswith("-"):
            if argv and word == argv[0]:
                return f"unknown command {word!r} (commands: {', '.join(self.options)})"
            return f"unrecognized arguments: {' '.join(extra)}"
        flag = word.partition("=")[0]
        owners = [other for other in self.options if flag in self.build(other)._option_string_actions]  # argparse's
        if not owners:
            return f"unrecognized arguments: {' '.join(extra)}"
        return f"{flag} does not go with {named}: it goes with {', '.join(owners)}"


def _seconds(text: str) -> float:
    """A duration option: a finite number of seconds above 0, at most WINDOW_CAP."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= WINDOW_CAP:  # nan and inf fail too
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {WINDOW_CAP:g} seconds, not {text}")
    return value


def _run_options(parser: argparse.ArgumentParser, what: str) -> None:
    """What every probing command takes: the selection, where results go, the window and the method."""
    parser.add_argument("--only", metavar="IDS", help=f"comma-separated {what} ids (default: all)")
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


def _sdk_options(parser: argparse.ArgumentParser) -> None:
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


def _gate_options(parser: argparse.ArgumentParser, bisect: bool) -> None:
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument(
        "--expect",
        metavar="FILE",
        type=Path,
        help="expected verdicts (JSON): exit 1 on a mismatch, 3 on a run undecided",
    )
    if bisect:
        gate.add_argument(
            "--bisect",
            action="store_true",
            help="one case, one subject: exit 0 not reproduced, 1 reproduced, 125 cannot tell (git bisect run)",
        )
        parser.add_argument(
            "--bisect-na",
            choices=BISECT_NA,
            default="skip",
            help="with --bisect, how a commit where the case does not apply counts: skip (default), good (date "
            "a defect that appears with its API), bad (date the commit where the case stopped applying)",
        )


def _output_options(parser: argparse.ArgumentParser) -> None:
    """What a run (or a merge) writes besides results.json."""
    output = parser.add_argument_group("report and CI output")
    output.add_argument("-v", "--verbose", action="store_true", help="a block per case: every arm's evidence in full")
    output.add_argument("--svg", type=Path, metavar="PATH", help="also save the summary as an SVG image")
    output.add_argument("--junit", type=Path, metavar="PATH", help="also write a JUnit XML file (a testcase per case)")
    output.add_argument(
        "--html", type=Path, metavar="PATH", help="also write a page: the grid of verdicts, each cell its evidence"
    )
    output.add_argument("--write-expect", type=Path, metavar="FILE", help="write the verdicts as an --expect file")


def run_options(parser: argparse.ArgumentParser) -> None:
    """run's: --version, a run's options, the SDKs, the gate and the outputs."""
    # not in the Namespace unless given ("version" in args): no other command has it, nor reads it
    parser.add_argument(
        "--version",
        action="store_true",
        default=argparse.SUPPRESS,
        help="the probe's version and the mcp it pins, then exit",
    )
    _run_options(parser, "case")
    _sdk_options(parser)
    _gate_options(parser, bisect=True)
    _output_options(parser)


def subject_options(command: str, bisect: bool) -> AddOptions:
    """The options of server or host (command): the subjects' commands, their environment, a run's options."""

    def options(parser: argparse.ArgumentParser) -> None:
        server_args.add_arguments(parser, command)
        _run_options(parser, f"{command} check")
        _gate_options(parser, bisect=bisect)
        env_args.add_arguments(parser)
        _output_options(parser)

    return options


def compare_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("compare", nargs=2, type=Path, metavar="FILE", help="the older and the newer results file")
    parser.add_argument("--markdown", action="store_true", help="print the changes as markdown")


def merge_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("merge", nargs="+", type=Path, metavar="FILE", help="OUT, then the results files to merge")
    parser.add_argument("--only", metavar="IDS", help="the ids in scope of --expect (default: all)")
    _gate_options(parser, bisect=False)
    _output_options(parser)


def report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report", type=Path, metavar="FILE", help="a results file, of any schema version")
    parser.add_argument("--only", metavar="IDS", help="the ids in scope of --expect (default: all)")
    _gate_options(parser, bisect=False)
    _output_options(parser)


def matrix_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", metavar="IDS", help="comma-separated case (or host check) ids (default: all)")
    _sdk_options(parser)
    server_args.add_arguments(parser, "matrix")
    env_args.add_arguments(parser)


def list_options(parser: argparse.ArgumentParser) -> None:
    """list takes no option."""

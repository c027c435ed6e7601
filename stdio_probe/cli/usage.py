"""What --help and --version tell a user: its commands, its probes (from the registry), examples, exit codes."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from stdio_probe import __version__
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS

PROG = "probe-stdio-lifecycle"
DISTRIBUTION = "stdio-probe"

USAGE = """\
probe-stdio-lifecycle [run] [options]
       probe-stdio-lifecycle server CMD [--large-call CALL] [--name LABEL]...
       probe-stdio-lifecycle host 'CMD {server}' [--name LABEL]...
       probe-stdio-lifecycle compare OLD NEW [--markdown]
       probe-stdio-lifecycle merge OUT IN... [--expect FILE] [--junit PATH]
       probe-stdio-lifecycle report FILE [--html PATH] [-v] [--expect FILE]
       probe-stdio-lifecycle matrix [--only IDS] [--sdk SPECS | --host CMD]
       probe-stdio-lifecycle list | --version | COMMAND --help"""

DESCRIPTION = """\
Reproduce lifecycle defects of the MCP Python SDK over stdio, from this run's
own observations. Every case runs a bug arm, a control arm, and a mitigated arm
(the bug's trigger with a host-side rule applied). The verdict comes from what
/proc, the pipes and the SDK showed: reproduced, not_reproduced, inconclusive,
error or not_applicable. Results go to results.json; the summary is one line
per case, or a matrix of verdicts when several SDKs ran; --html PATH also
writes a page (one file, readable offline): a grid of verdicts, a click on a
cell shows its evidence.

commands (each has --help; run is the default):
  run      the cases L1-L13 on SDKs (this interpreter's pinned mcp by default)
  server   the server checks on any stdio server command
  host     the host checks on any stdio host command
  compare  the verdict changes between two results files
  merge    results files (shards) into one, then report and gate as a run
  report   a results file (any version) reported again: summary, --html, gate
  matrix   the selection as a CI matrix (JSON), to shard a sweep
  list     every case and check, one line each
The older flag forms (--server, --host, --compare, --merge, --list-matrix,
--list) still work: each stands for its command."""

EXAMPLES = """\
examples:
  probe-stdio-lifecycle                      every case, pinned mcp
  probe-stdio-lifecycle --only L1,L2 -v      two cases, every arm's evidence
  probe-stdio-lifecycle --sdk 2.2.0,2.3.0    PyPI releases: a matrix
  probe-stdio-lifecycle --sdk ~/src/python-sdk --only L3
                                             a local checkout or mcp wheel
  probe-stdio-lifecycle --sdk 2.2.0,2.3.0 --expect expectations.json \\
      --junit junit.xml                      gate CI on known verdicts
  probe-stdio-lifecycle --out - > results.json
                                             results on stdout, report on stderr
  probe-stdio-lifecycle --html results.html  also the page of the run
  git bisect run probe-stdio-lifecycle --only L3 --sdk . --bisect
  probe-stdio-lifecycle server --help        the other commands, likewise"""

EXIT_CODES = """\
exit codes:
  0    run complete, whatever the verdicts (with --expect: all met)
  1    --expect: a verdict mismatch or a stale entry;
       compare: a verdict changed
  2    usage error: one line, nothing spawned, no results file touched
  3    --expect: no mismatch, but a run could not decide
       (error or inconclusive, where that was not expected)
  4    the probe itself failed (full disk, closed stdout, no SDK could
       be made ready): one line, no half-written results file
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): all reaped
  --bisect: 0 not reproduced, 1 reproduced, 125 cannot tell, 128 usage"""

GATE_CODES = """\
exit codes: 0 ok (with --expect: all met), 1 --expect mismatch or stale,
  2 usage error, 3 a run undecided under --expect, 4 the probe failed,
  130 interrupted, 143 terminated"""


@dataclass(frozen=True)
class CommandHelp:
    """One command's --help: its usage line, what it does, and its examples and exit codes."""

    usage: str
    description: str
    epilog: str


def _listing(probes: dict) -> str:
    return "\n".join(f"  {probe_id:<4} {probe.title}" for probe_id, probe in probes.items())


def epilog() -> str:
    """run's (and the bare command's) epilog: every probe, the examples, every exit code."""
    return (
        f"cases:\n{_listing(CASES)}\n\nserver checks (server):\n{_listing(CHECKS)}\n\n"
        f"host checks (host):\n{_listing(HOST_CHECKS)}\n\n{EXAMPLES}\n\n{EXIT_CODES}"
    )


def command_help(command: str) -> CommandHelp:
    """The --help of each command but run (whose help is the tool's own: USAGE, DESCRIPTION, epilog())."""
    return {
        "server": CommandHelp(
            f"{PROG} server COMMAND [--large-call CALL] [--name LABEL]\n"
            f"       [--protocol ERA] [--server COMMAND ...] [options]",
            "The server checks on any stdio server (any language, no SDK needed): the\n"
            "probe is the server's client. Same as the older form --server COMMAND.",
            f"server checks:\n{_listing(CHECKS)}\n\nexamples:\n"
            f'  {PROG} server "python my_server.py"\n'
            f'  {PROG} server "mcp-server-git --repository ." \\\n'
            f"      --large-call 'git_log {{\"repo_path\": \".\", \"max_count\": 1500}}'\n"
            f'  {PROG} server "uvx mcp-server-time" --protocol legacy \\\n'
            f'      --server "uvx mcp-server-time" --name time-new\n'
            f'  {PROG} server "node build/index.js" --env API_URL=https://x\n\n'
            f"{GATE_CODES}",
        ),
        "host": CommandHelp(
            f"{PROG} host 'COMMAND {{server}}' [--name LABEL]\n"
            f"       [--host 'COMMAND {{server}}' ...] [options]",
            "The host checks on any stdio host: the probe's scenario server takes the\n"
            "place of the {server} word. Same as the older form --host COMMAND.",
            f"host checks:\n{_listing(HOST_CHECKS)}\n\nexamples:\n"
            f'  {PROG} host "node client.js {{server}}" --name my-host\n'
            f'  {PROG} host \\\n      "python examples/hosts/python_sdk_client.py {{server}}" \\\n'
            f"      --only H1,H4 --expect host-expectations.json\n\n{GATE_CODES}",
        ),
        "compare": CommandHelp(
            f"{PROG} compare OLD NEW [--markdown]",
            "The verdicts that differ between two results files, per subject and case.\n"
            "Same as the older form --compare OLD NEW.",
            f"examples:\n  {PROG} compare old.json new.json\n"
            f"  {PROG} compare old.json new.json --markdown >> changes.md\n\n"
            "exit codes: 0 no verdict changed, 1 a verdict changed, 2 usage error",
        ),
        "merge": CommandHelp(
            f"{PROG} merge OUT IN... [--only IDS] [--expect FILE]\n"
            f"       [--junit PATH] [-v]",
            "Merge results files (shards of a sweep) into OUT, validated against the\n"
            "schema, then report, gate and write as a run does. --only is the scope of\n"
            "--expect. Same as the older form --merge OUT IN...",
            f"examples:\n  {PROG} merge results.json shards/*.json \\\n"
            f"      --expect expectations.json --junit junit.xml\n\n{GATE_CODES}",
        ),
        "report": CommandHelp(
            f"{PROG} report FILE [--html PATH] [-v] [--svg PATH]\n"
            f"       [--junit PATH] [--only IDS] [--expect FILE]",
            "A results file, of any schema version, through the output stage of a run,\n"
            "running nothing: the summary (or -v), the page (--html), SVG, JUnit, and\n"
            "the gate of --expect (--only is its scope). FILE is not changed.",
            f"examples:\n  {PROG} report results.json --html results.html\n"
            f"  {PROG} report results.json -v\n"
            f"  {PROG} report results.json --expect expectations.json\n\n{GATE_CODES}",
        ),
        "matrix": CommandHelp(
            f"{PROG} matrix [--only IDS] [--sdk SPECS] [--python PATH]\n"
            f"       {PROG} matrix --host 'COMMAND {{server}}' [--only IDS]",
            "The selection as a GitHub Actions matrix (JSON): one entry per subject and\n"
            "case, whose args select just that pair. Same as the older --list-matrix.",
            f"examples:\n  {PROG} matrix --sdk 2.2.0,2.3.0\n"
            f'  {PROG} matrix --host "node client.js {{server}}" --only H1,H4\n\n'
            "exit codes: 0 ok, 2 usage error",
        ),
        "list": CommandHelp(
            f"{PROG} list",
            "Every case, server check and host check, one line each: its id and title.\n"
            "Same as the older form --list.",
            f"examples:\n  {PROG} list\n\nexit codes: 0 ok, 2 usage error",
        ),
    }[command]


def version() -> str:
    """This probe's version, the mcp it pins, and the mcp this interpreter has, read without importing mcp."""
    try:
        here = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        here = "none"
    return f"{PROG} {__version__}\npinned: {pinned_mcp()} (this interpreter has mcp {here})"


def pinned_mcp() -> str:
    """The mcp requirement: from the checkout's pyproject.toml when run from one, else the installed metadata."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text())["project"]
        requirements = project["dependencies"] if project["name"] == DISTRIBUTION else None
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        requirements = None
    if requirements is None:
        try:
            requirements = metadata.requires(DISTRIBUTION) or []
        except metadata.PackageNotFoundError:
            requirements = []
    return next((r.split(";")[0].strip() for r in requirements if r.replace(" ", "").startswith("mcp=")), "unknown")

"""What --help and --version tell a user: the tool, its cases (from the registry), examples, exit codes."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from stdio_probe import __version__
from stdio_probe.cases import CASES
from stdio_probe.checks import CHECKS
from stdio_probe.hosts import HOST_CHECKS

PROG = "probe-stdio-lifecycle"
DISTRIBUTION = "stdio-probe"

USAGE = """\
probe-stdio-lifecycle [options]
       probe-stdio-lifecycle --server CMD [--large-call CALL] [--name LABEL]...
       probe-stdio-lifecycle --host 'CMD {server}' [--name LABEL]...
       probe-stdio-lifecycle --compare OLD NEW [--markdown]
       probe-stdio-lifecycle --merge OUT IN... [--expect FILE] [--junit PATH]
       probe-stdio-lifecycle --list | --list-matrix [--only IDS] [--sdk SPECS]
       probe-stdio-lifecycle --version | --help"""

DESCRIPTION = """\
Reproduce lifecycle defects of the MCP Python SDK over stdio, from this run's
own observations. Every case runs a bug arm, a control arm, and a mitigated arm
(the bug's trigger with a host-side rule applied). The verdict comes from what
/proc, the pipes and the SDK showed: reproduced, not_reproduced, inconclusive,
error or not_applicable. Results go to results.json; the summary is one line
per case, or a matrix of verdicts when several SDKs ran."""

EXAMPLES = """\
examples:
  probe-stdio-lifecycle                      every case, pinned mcp
  probe-stdio-lifecycle --only L1,L2 -v      two cases, every reason in full
  probe-stdio-lifecycle --sdk 2.2.0,2.3.0    PyPI releases: a matrix
  probe-stdio-lifecycle --sdk ~/src/python-sdk --only L3
                                             a local checkout or mcp wheel
  probe-stdio-lifecycle --sdk 2.2.0,2.3.0 --expect expectations.json \\
      --junit junit.xml                      gate CI on known verdicts
  probe-stdio-lifecycle --out - > results.json
                                             results on stdout, report on stderr
  probe-stdio-lifecycle --compare old.json new.json
                                             verdict changes between two runs
  probe-stdio-lifecycle --list-matrix --sdk 2.2.0,2.3.0
                                             a CI matrix to shard a sweep
  probe-stdio-lifecycle --merge results.json shards/*.json --expect FILE
                                             one results file of the shards
  git bisect run probe-stdio-lifecycle --only L3 --sdk . --bisect
  probe-stdio-lifecycle --server "mcp-server-git --repository ." \\
      --large-call 'git_log {"repo_path": ".", "max_count": 1500}'
                                             checks S1-S11 on any stdio server
  probe-stdio-lifecycle --host "node client.js {server}" --name my-host
                                             checks H1-H10 on any stdio host"""

EXIT_CODES = """\
exit codes:
  0    run complete, whatever the verdicts (with --expect: all met)
  1    --expect: a verdict mismatch or a stale entry;
       --compare: a verdict changed
  2    usage error: one line, nothing spawned, no results file touched
  3    --expect: no mismatch, but a run could not decide
       (error or inconclusive, where that was not expected)
  4    the probe itself failed (full disk, closed stdout, no SDK could
       be made ready): one line, no half-written results file
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM): all reaped
  --bisect: 0 not reproduced, 1 reproduced, 125 cannot tell, 128 usage"""


def epilog() -> str:
    cases = "\n".join(f"  {case_id:<4} {case.TITLE}" for case_id, case in CASES.items())
    checks = "\n".join(f"  {check_id:<4} {check.TITLE}" for check_id, check in CHECKS.items())
    hosts = "\n".join(f"  {check_id:<4} {check.TITLE}" for check_id, check in HOST_CHECKS.items())
    return (
        f"cases:\n{cases}\n\nserver checks (--server):\n{checks}\n\nhost checks (--host):\n{hosts}\n\n"
        f"{EXAMPLES}\n\n{EXIT_CODES}"
    )


def version() -> str:
    """This probe's version, the mcp it pins, and the mcp this interpreter has, read without importing mcp."""
    try:
        here = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        here = "none"
    return f"{PROG} {__version__}\npinned: {pinned_mcp()} (this interpreter has mcp {here})"


def pinned_mcp() -> str:
    """The mcp requirement: from the checkout's pyproject.toml when run from one, else the installed metadata."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
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

"""The README's table of real servers: every server check on each, from one run, with versions.

    python -m tests.server_table [--window 10] [--out results/servers.json] [--only LABEL,...] [--checks ID,...]

The servers are the reference servers and SDKs that install here, pinned and cached by
tests/third_party.py (PyPI into an environment each, npm into one folder), minimal servers of our
own on each SDK (tests/servers/), and the Go and Rust binaries the npm registry ships. The official
Go, Rust, Java, C# and Kotlin SDKs cannot be built here (their registries are unreachable).
Servers run one after another (a server's arms share its files); whatever a server writes goes to
a new file in a temporary folder at each start, never a device file. A large call's long string
arguments are shortened in the results file. Prints the Markdown table.
"""

from __future__ import annotations

import datetime
import json
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from stdio_probe.core import runner, spawn
from stdio_probe.core.model import Options, Server
from stdio_probe.report import record
from stdio_probe.server.checks import CHECKS
from tests import tables, third_party

HERE = Path(__file__).parent
LEGEND = "R reproduced · – not reproduced · n/a not applicable (no large call; S13: no slow call) · ? inconclusive"
BIG = 100_000  # characters a large call echoes back: more than a pipe holds
QUERY = (  # about 3000 rows of 40 characters: an answer larger than a pipe, from an empty database (a SELECT:
    # mcp-server-sqlite's read_query takes nothing else)
    "SELECT i, printf('%030d', i) AS pad FROM "
    "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) SELECT i FROM n)"
)
SLOW_QUERY = (  # counts 2,000,000 rows one by one: 0.4-0.8 s of SQLite's work, a one-row answer (a SELECT again)
    "SELECT count(*) AS n FROM "
    "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) SELECT i FROM n)"
)
SLOW = ("slow", {"seconds": 0.5})  # the slow tool of our own minimal servers (tests/servers/)
ARGUMENT_CAP = 80  # characters of a large call's string argument kept in the results file


@dataclass(frozen=True)
class Entry:
    """One row: what the server is and how the probe runs it."""

    language: str
    sdk: str
    package: str
    server: Server


def npm_pin(name: str) -> str:
    """name@version as tests/third_party.py pins it."""
    return next(spec for spec in third_party.NPM_SERVERS if spec.rsplit("@", 1)[0] == name)


def python_pin(label: str) -> str:
    """The table's requirements of label, as one text."""
    return ", ".join(third_party.TABLE_PYTHON[label])


def entries(work: Path) -> list[Entry]:
    """The table's servers; their files (a memory file, a git repository, a text file, databases) under work."""
    node = shutil.which("node")
    npm = third_party.npm_servers()
    ts = npm / "@modelcontextprotocol"
    py = {label: third_party.python_env(reqs) for label, reqs in third_party.TABLE_PYTHON.items()}
    std = third_party.python_servers()
    repo = third_party.git_repo(work / "repo")
    (work / "files").mkdir()
    text = third_party.text_file(work / "files" / "large.txt")
    seed = work / "memory-seed.jsonl"
    entity = {"type": "entity", "entityType": "t", "observations": ["o" * 1000]}
    seed.write_text("".join(json.dumps({**entity, "name": f"e{i}"}) + "\n" for i in range(100)))

    def fresh(variable_or_flag: str, command: str, copy: Path | None = None) -> str:
        """command given a new file under work at each start, as an environment variable (NAME=) or a flag."""
        made = f"f=$(mktemp {shlex.quote(str(work))}/state.XXXXXX)"
        seeded = f' && cp {shlex.quote(str(copy))} "$f"' if copy else ""
        run = (
            f'{variable_or_flag}"$f" exec {command}'
            if variable_or_flag.endswith("=")
            else f'exec {command} {variable_or_flag} "$f"'
        )
        return f"sh -c {shlex.quote(made + seeded + ' && ' + run)}"

    large = ("large", {})
    cron = npm / "mcp-cron-linux-amd64" / "bin" / "mcp-cron"
    leanspec = npm / "@leanspec" / "mcp-linux-x64" / "leanspec-mcp"
    return [
        Entry(
            "TypeScript",
            "TS SDK",
            npm_pin("@modelcontextprotocol/server-everything"),
            Server(
                "server-everything",
                f"{node} {ts / 'server-everything/dist/index.js'} stdio",
                ("echo", {"message": "x" * BIG}),
                slow_call=("trigger-long-running-operation", {"duration": 0.5, "steps": 1}),
            ),
        ),
        Entry(
            "TypeScript",
            "TS SDK",
            npm_pin("@modelcontextprotocol/server-memory"),
            Server(
                "server-memory",
                fresh("MEMORY_FILE_PATH=", f"{node} {ts / 'server-memory/dist/index.js'}", seed),
                ("read_graph", {}),
            ),
        ),
        Entry(
            "TypeScript",
            "TS SDK",
            npm_pin("@modelcontextprotocol/server-sequential-thinking"),
            Server("server-sequential-thinking", f"{node} {ts / 'server-sequential-thinking/dist/index.js'}"),
        ),
        Entry(
            "TypeScript",
            "TS SDK",
            npm_pin("@modelcontextprotocol/server-filesystem"),
            Server(
                "server-filesystem",
                f"{node} {ts / 'server-filesystem/dist/index.js'} {work / 'files'}",
                ("read_text_file", {"path": str(text)}),
            ),
        ),
        Entry(
            "TypeScript",
            "TS SDK",
            npm_pin("@modelcontextprotocol/sdk"),
            Server("ts-sdk minimal", f"{node} {HERE / 'servers' / 'ts_sdk_server.mjs'} {npm}", large, slow_call=SLOW),
        ),
        Entry(
            "Python",
            f"mcp {python_pin('python-sdk').split('==')[1]}",
            python_pin("python-sdk") + " (low-level Server)",
            Server(
                "python-sdk lowlevel",
                f"{py['python-sdk'] / 'python'} {HERE / 'servers' / 'py_lowlevel.py'}",
                large,
                slow_call=SLOW,
            ),
        ),
        Entry(
            "Python",
            f"mcp {python_pin('python-sdk').split('==')[1]}",
            python_pin("python-sdk") + " (MCPServer)",
            Server(
                "python-sdk MCPServer",
                f"{py['python-sdk'] / 'python'} {HERE / 'servers' / 'py_mcpserver.py'}",
                large,
                slow_call=SLOW,
            ),
        ),
        Entry(
            "Python",
            "fastmcp",
            python_pin("fastmcp"),
            Server(
                "fastmcp minimal",
                f"{py['fastmcp'] / 'python'} {HERE / 'servers' / 'fastmcp_server.py'}",
                large,
                slow_call=SLOW,
            ),
        ),
        Entry(
            "Python",
            "Python SDK",
            python_pin("mcp-server-fetch"),
            Server("mcp-server-fetch", str(py["mcp-server-fetch"] / "mcp-server-fetch")),
        ),
        Entry(
            "Python",
            "Python SDK",
            python_pin("mcp-server-sqlite"),
            Server(
                "mcp-server-sqlite",
                fresh("--db-path", str(py["mcp-server-sqlite"] / "mcp-server-sqlite")),
                ("read_query", {"query": QUERY}),
                slow_call=("read_query", {"query": SLOW_QUERY}),
            ),
        ),
        Entry(
            "Python",
            "Python SDK",
            third_party.PYTHON_SERVERS[1],
            Server(
                "mcp-server-git",
                f"{std / 'mcp-server-git'} --repository {repo}",
                ("git_log", {"repo_path": str(repo), "max_count": third_party.LOG_COMMITS}),
            ),
        ),
        Entry(
            "Python",
            "Python SDK",
            third_party.PYTHON_SERVERS[0],
            Server("mcp-server-time", str(std / "mcp-server-time")),
        ),
        Entry(
            "Go",
            "mcp-go",
            npm_pin("mcp-time-linux-x64"),
            Server(
                "mcp-time",
                str(npm / "mcp-time-linux-x64" / "bin" / "mcp-time"),
                ("current_time", {"format": "x" * BIG}),
            ),
        ),
        Entry(
            "Go",
            "go-sdk",
            npm_pin("mcp-cron-linux-amd64"),
            Server(
                "mcp-cron",
                fresh("--db-path", f"{cron} --transport stdio"),
                ("query_task_result", {"sql": QUERY}),
                slow_call=("query_task_result", {"sql": SLOW_QUERY}),
            ),
        ),
        Entry(
            "Rust",
            "rmcp",
            npm_pin("@leanspec/mcp-linux-x64"),
            Server(  # it writes its specs under its working directory: a new one at each start
                "leanspec-mcp",
                "sh -c " + shlex.quote(f'cd "$(mktemp -d {work}/specs.XXXXXX)" && exec {leanspec}'),
                ("create_spec", {"title": "large", "content": "x" * BIG}),
            ),
        ),
    ]


def shortened(value: object) -> object:
    """value with every long string cut to ARGUMENT_CAP characters and its length named."""
    if isinstance(value, str) and len(value) > ARGUMENT_CAP:
        return f"{value[:ARGUMENT_CAP]}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shortened(item) for item in value]
    return value


def run(window: float, only: list[str] | None, checks: list[str]) -> dict:
    """Every check (of checks) on every server (one server at a time), as a results document."""
    started = datetime.datetime.now(datetime.UTC)
    options = Options(window, "fast")
    runs, described = [], {}
    # one supervisor for every server's run, whose end counts what outlived the arms
    with tempfile.TemporaryDirectory(prefix="server-table-") as folder, spawn.Supervisor() as supervisor:
        for entry in entries(Path(folder)):
            if only and entry.server.label not in only:
                continue
            print(f"{entry.server.label} ...", file=sys.stderr, flush=True)
            for found in runner.run_servers([entry.server], checks, options, supervisor=supervisor):
                found["server"] = shortened(found["server"])
                for arm in found["arms"].values():
                    arm.pop("command", None)  # the server's command is the run's
                runs.append(found)
            described[entry.server.label] = {"language": entry.language, "sdk": entry.sdk, "package": entry.package}
        left = supervisor.end()
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": left, "servers": described}
    return record.results(meta, runs)


def markdown(document: dict) -> str:
    """The table: a row per server (language, SDK, package, the protocol era it was found to speak), a column
    per check."""
    checks = list(dict.fromkeys(run["case"] for run in document["runs"]))
    verdicts: dict[str, dict[str, str]] = {}
    eras: dict[str, str] = {}
    for found in document["runs"]:
        label = found["server"]["label"]
        verdicts.setdefault(label, {})[found["case"]] = tables.SHORT[found["verdict"]]
        eras[label] = found["server"]["era"]["protocol"]
    lines = [
        "| server | language, SDK | package | era | " + " | ".join(checks) + " |",
        "|---|---|---|---|" + "---|" * len(checks),
    ]
    for label, row in verdicts.items():
        about = document["metadata"]["servers"][label]
        cells = " | ".join(row.get(check, "") for check in checks)
        package = f"`{about['package']}`"
        lines.append(f"| {label} | {about['language']}, {about['sdk']} | {package} | {eras[label]} | {cells} |")
    return "\n".join([*lines, "", LEGEND])


def main(argv: list[str] | None = None) -> int:
    return tables.main(
        argv, __doc__.splitlines()[0], HERE.parent / "results" / "servers.json", run, markdown, list(CHECKS)
    )


if __name__ == "__main__":
    sys.exit(main())

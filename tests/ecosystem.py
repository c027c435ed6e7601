"""The ecosystem's table: the most downloaded stdio MCP servers and hosts, as tests/ecosystem.toml lists them.

    python -m tests.ecosystem [install] [--only PACKAGE,...]
    python -m tests.ecosystem run [--only PACKAGE,...] [--out results/ecosystem.json]
    python -m tests.ecosystem matrix

The file holds the rule that chose them, the date the registries' figures were read, and per entry its
registry, pinned version, figure, language and runtime, and either a recipe (servers: the program of the
package, the arguments and environment a user would give it, a large and a slow call where a tool allows;
hosts: the adapter under examples/hosts/) or the reason it has none. load() reads it (the stdlib's tomllib);
install() puts a server's pinned package into a cache of its own (ECOSYSTEM_CACHE: an npm prefix or a venv
per package, built and reused as tests/third_party.py builds its servers; a host through
tests/third_party_hosts.py, a venv or an npm prefix of its own under its cache); argv() is the command a host
would run. Run as a module it installs every server with a recipe and every host with an adapter, one after
another, and prints each command line: a package that fails to install is named on stderr, the others go on.

`run` runs every server with a recipe through every server check and every host with an adapter through
every host check (the probe's defaults: the fast method, a 10 s window), each subject into a results document
of its own (a shard, in a temporary folder), then merges them as the probe's `merge` does into one results
file. A package that does not install, or a subject the probe itself fails on, is a run per check with the
verdict error and why (errored); one that does not start, or misbehaves, is what the probe records of it.
Entries without a recipe are in the metadata (metadata.ecosystem.not_run) with their reason. A server gets
the recipe's environment and, of the probe's, only the secrets the recipe names that are set (by name: --env
NAME). `matrix` prints the subjects as a GitHub Actions matrix: .github/workflows/ecosystem.yml runs one per
job (`run --only PACKAGE --out SHARD`) and merges the shards with the probe's `merge`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from stdio_probe.core import env_args, runner, spawn
from stdio_probe.core.decide import NO_CONTRACT, NO_HOST_ARM, decide, decide_check
from stdio_probe.core.model import Host, Options, Server
from stdio_probe.core.outcome import Outcome
from stdio_probe.report import compare, record
from tests import third_party, third_party_hosts
from tests.server_table import shortened

LIST = Path(__file__).with_suffix(".toml")
RESULTS = Path(__file__).resolve().parent.parent / "results" / "ecosystem.json"  # the table's run, as committed
ECOSYSTEM_CACHE = Path(os.environ.get("STDIO_PROBE_ECOSYSTEM", Path.home() / ".cache" / "stdio-probe" / "ecosystem"))
PLACEHOLDERS = ("{work}", "{files}", "{text}", "{repo}", "{panda}", "{big}")  # what a recipe's words may name: files()
BIG = 100_000  # characters of {big}: an argument a tool echoes back, more than a pipe holds


@dataclass(frozen=True)
class Call:
    """A tool call of a recipe: the probe's --large-call or --slow-call."""

    tool: str
    arguments: dict


@dataclass(frozen=True)
class Recipe:
    """How a user runs a server: the package's program, its arguments and environment (secrets by name only)."""

    program: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # variables a user would set to a credential: passed as `--env NAME`
    large_call: Call | None = None
    slow_call: Call | None = None
    python: str | None = None  # a PyPI server that needs a newer Python than the probe's: the version uv looks for
    requires: tuple[str, ...] = ()  # pins installed with it: mcp 1.x for a server on 1.x's API that pins no bound


@dataclass(frozen=True)
class Entry:
    """One server or host of the table, with the figure it was chosen by."""

    kind: str  # "server" or "host"
    registry: str  # "npm" or "pypi"
    package: str  # as the registry names it (a PyPI extra included)
    version: str
    downloads_a_month: int | None  # npm's figure
    pypi_rank: int | None  # PyPI's figure: its place among the 15,000 most downloaded packages
    language: str
    runtime: str
    recipe: Recipe | None  # servers
    adapter: str | None  # hosts: a file under examples/hosts/
    no_recipe: str | None  # why it has neither
    started: str | None  # what a start by hand showed (the date, initialize answered or why not)
    requires: tuple[str, ...] = ()  # hosts: what it runs on, pinned (its MCP client)

    @property
    def label(self) -> str:
        """The subject's name in the results: the package as the registry names it (what --only takes)."""
        return self.package

    @property
    def runnable(self) -> bool:
        return self.recipe is not None or self.adapter is not None

    @property
    def requirement(self) -> str:
        return f"{self.package}{'@' if self.registry == 'npm' else '=='}{self.version}"


@dataclass(frozen=True)
class Ecosystem:
    rule: str
    figures_read: datetime.date
    candidates: dict[str, int]
    servers: list[Entry]
    hosts: list[Entry]


def load(path: Path = LIST) -> Ecosystem:
    """The table's list, as typed entries (a KeyError or TypeError names a malformed one)."""
    data = tomllib.loads(path.read_text())
    return Ecosystem(
        data["rule"],
        data["figures_read"],
        data["candidates"],
        [_entry("server", item) for item in data["server"]],
        [_entry("host", item) for item in data["host"]],
    )


def _entry(kind: str, item: dict) -> Entry:
    recipe = item.get("recipe")
    return Entry(
        kind,
        item["registry"],
        item["package"],
        item["version"],
        item.get("downloads_a_month"),
        item.get("pypi_rank"),
        item["language"],
        item["runtime"],
        _recipe(recipe) if recipe else None,
        item.get("adapter"),
        item.get("no_recipe"),
        item.get("started"),
        tuple(item.get("requires", ())) if kind == "host" else (),
    )


def _recipe(item: dict) -> Recipe:
    calls = {
        name: Call(item[name]["tool"], item[name]["arguments"]) for name in ("large_call", "slow_call") if name in item
    }
    return Recipe(
        item["program"],
        tuple(item.get("args", ())),
        dict(item.get("env", {})),
        tuple(item.get("secrets", ())),
        calls.get("large_call"),
        calls.get("slow_call"),
        item.get("python"),
        tuple(item.get("requires", ())),
    )


def install(entry: Entry) -> Path:
    """The bin folder that holds entry's program, its pinned package installed there on first use."""
    if entry.registry == "npm":
        return _npm(entry)
    return _venv(entry)


def _npm(entry: Entry) -> Path:
    bin_folder = Path(".bin") / entry.recipe.program
    return third_party.npm_prefix([entry.requirement], bin_folder, ECOSYSTEM_CACHE) / bin_folder.parent


def _venv(entry: Entry) -> Path:
    wanted = [entry.requirement, *entry.recipe.requires]
    return third_party.python_env(wanted, [entry.recipe.program], entry.recipe.python, ECOSYSTEM_CACHE)


def files(work: Path) -> dict[str, str]:
    """What the placeholders stand for, made under work: {files} a folder holding {text}, a text file larger
    than a pipe; {repo} a git repository of third_party.LOG_COMMITS commits; {panda} a Panda CSS project (its
    config alone: @pandacss/mcp starts only in one); {big} a string of BIG characters."""
    (work / "files").mkdir(parents=True, exist_ok=True)
    text = third_party.text_file(work / "files" / "large.txt")
    repo = work / "repo"
    if not repo.exists():
        third_party.git_repo(repo)
    panda = work / "panda"
    panda.mkdir(exist_ok=True)
    (panda / "panda.config.mjs").write_text('export default { include: ["./src/**/*.tsx"], outdir: "styled-system" }\n')
    places = {"{work}": str(work), "{files}": str(work / "files"), "{text}": str(text), "{repo}": str(repo)}
    return places | {"{panda}": str(panda), "{big}": "x" * BIG}


def filled(value: object, places: dict[str, str]) -> object:
    """value (a word, or a call's arguments) with every placeholder replaced."""
    if isinstance(value, str):
        for name, path in places.items():
            value = value.replace(name, path)
        return value
    if isinstance(value, dict):
        return {key: filled(item, places) for key, item in value.items()}
    if isinstance(value, list):
        return [filled(item, places) for item in value]
    return value


def argv(entry: Entry, places: dict[str, str]) -> list[str]:
    """The server's command: its installed program and the recipe's arguments, placeholders filled."""
    return [str(install(entry) / entry.recipe.program), *(filled(word, places) for word in entry.recipe.args)]


def host(entry: Entry) -> Host:
    """The host's subject: its adapter's command template, the host installed (on first use) in a cache of its own
    by tests/third_party_hosts.py."""
    pin = third_party_hosts.HostPin(
        entry.package, entry.registry, entry.package, entry.version, entry.adapter, entry.requires
    )
    return Host(entry.label, third_party_hosts.host(pin).command)


def secrets(entry: Entry) -> list[str]:
    """The recipe's secrets that are set here: passed by name, as the probe's --env NAME (never a value in argv)."""
    return [name for name in entry.recipe.secrets if name in os.environ] if entry.recipe else []


def server(entry: Entry, places: dict[str, str]) -> Server:
    """The server's subject: its installed command, its calls and its environment (the recipe's values, the secrets
    by name), placeholders filled."""
    recipe = entry.recipe
    given = [f"{name}={filled(value, places)}" for name, value in recipe.env.items()] + secrets(entry)
    large, slow = ((c.tool, filled(c.arguments, places)) if c else None for c in (recipe.large_call, recipe.slow_call))
    return Server(
        entry.label, shlex.join(argv(entry, places)), large, env=env_args.resolve(given, False), slow_call=slow
    )


def errored(entry: Entry, reason: str) -> list[dict]:
    """A subject that could not be installed, or on which the probe itself failed: a run per check whose every arm
    is an error for that reason, decided by the probe's own rules (error)."""
    at = time.time()
    kind = runner.KINDS[entry.kind]
    if entry.kind == "server":
        command = shlex.join([entry.recipe.program, *entry.recipe.args])
        evidence = f"never started: {reason}"
        era = {"protocol": None, "version": None, "chosen_by": "server/discover", "evidence": evidence}
        subject, decided, held = {"label": entry.label, "command": command, "era": era}, decide_check, NO_CONTRACT
    else:
        subject, decided, held = {"label": entry.label, "command": f"{entry.adapter} {{server}}"}, decide, NO_HOST_ARM
    runs = []
    for check in kind.probes.values():
        arms = {arm: {"error": reason, "started_at": at, "duration_s": 0.0} for arm in check.arms}
        runs.append(record.make_run(check.id, kind.key, subject, decided(check, arms), held, arms))
    return runs


def described(entry: Entry) -> dict:
    """What the results say of an entry: its pin, its figure, and its recipe's program or adapter, or why none."""
    about = {
        "kind": entry.kind,
        "registry": entry.registry,
        "package": entry.package,
        "version": entry.version,
        "figure": f"{entry.downloads_a_month} a month" if entry.pypi_rank is None else f"rank {entry.pypi_rank}",
        "language": entry.language,
    }
    if entry.recipe:
        about |= {"program": entry.recipe.program, "requires": list(entry.recipe.requires)}
    elif entry.adapter:
        about |= {"adapter": entry.adapter, "requires": list(entry.requires)}
    else:
        about |= {"not_run": entry.no_recipe}
    return about


def document(entry: Entry, listed: Ecosystem, places: dict[str, str]) -> dict:
    """One subject through every check of its kind, as a results document (a shard): the probe's runs, or
    errored's; its secrets masked, a large call's long arguments shortened. The metadata names the list's
    date, this subject, and every entry without a recipe."""
    started = datetime.datetime.now(datetime.UTC)
    options = Options()
    left = 0
    try:
        subject = server(entry, places) if entry.kind == "server" else host(entry)
    except (third_party.Unavailable, RuntimeError, OSError, env_args.EnvArgsError) as exc:
        runs = errored(entry, f"not installed: {exc}")
    else:
        kind = runner.KINDS[entry.kind]
        with spawn.Supervisor() as supervisor:  # its end counts what outlived the arms
            try:
                if entry.kind == "server":
                    runs = runner.run_servers([subject], list(kind.probes), options, supervisor=supervisor)
                else:
                    runs = runner.run_hosts([subject], list(kind.probes), options, supervisor=supervisor)
            except Exception as exc:  # the probe's own failure on this subject: its cells, not the table's end
                runs = errored(entry, f"the probe failed: {type(exc).__name__}: {exc}")
            left = supervisor.end()
    for found in runs:  # the calls' long arguments shortened ({big}); the command kept whole
        calls = {key: found[entry.kind][key] for key in ("large_call", "slow_call") if key in found[entry.kind]}
        found[entry.kind] |= shortened(calls)
    not_run = [described(other) for other in [*listed.servers, *listed.hosts] if not other.runnable]
    about = {"figures_read": listed.figures_read.isoformat(), "subject": described(entry), "not_run": not_run}
    subjects = {f"{entry.kind}s": {entry.label: described(entry)}}  # as the README's tables name their packages
    meta = record.metadata(options, record.main_argv(), started) | {"leftover_processes": left, "ecosystem": about}
    meta |= subjects
    redact = env_args.redactor([word for name in secrets(entry) for word in ("--env", name)])
    return redact(record.results(meta, runs))


def run(entries: list[Entry], listed: Ecosystem, out: Path, work: Path) -> dict:
    """Every entry into a shard of its own, one after another, then the shards merged (compare.merge, the probe's
    merge) into out; the merged document."""
    places = files(work)
    with tempfile.TemporaryDirectory(prefix="ecosystem-") as folder:
        shards = []
        for at, entry in enumerate(entries):
            print(f"{entry.kind} {entry.requirement} ...", file=sys.stderr, flush=True)
            shards.append(Path(folder) / f"{at}.json")
            record.write_atomic(shards[-1], document(entry, listed, places))
        merged = compare.merge(shards, record.main_argv()) if len(shards) > 1 else record.stored(shards[0])
    record.write_atomic(out, merged)
    return merged


def matrix(entries: list[Entry]) -> dict:
    """A GitHub Actions matrix, one entry per subject: its package (run's --only) and a name safe in file and
    artifact names."""
    include = [
        {
            "package": entry.package,
            "kind": entry.kind,
            "name": re.sub(r"[^A-Za-z0-9._-]+", "_", entry.package).strip("_"),
        }
        for entry in entries
    ]
    return {"include": include}


def chosen(listed: Ecosystem, only: str | None) -> list[Entry]:
    """The runnable entries (servers first), those named in only if given; ValueError for a name that is none."""
    runnable = [entry for entry in [*listed.servers, *listed.hosts] if entry.runnable]
    if only is None:
        return runnable
    names = only.split(",")
    if unknown := [name for name in names if name not in {entry.package for entry in runnable}]:
        raise ValueError(f"not an entry with a recipe or an adapter: {', '.join(unknown)}")
    return [entry for entry in runnable if entry.package in names]


def install_all(entries: list[Entry], places: dict[str, str]) -> None:
    """Install every entry, printing its command line (a host's: its template); one that fails is named on stderr."""
    for entry in entries:
        try:
            if entry.kind == "host":
                print(f"{entry.requirement}: {host(entry).command}")
                continue
            words = argv(entry, places)
        except (third_party.Unavailable, RuntimeError) as exc:
            print(f"{entry.requirement}: not installed: {exc}", file=sys.stderr)
            continue
        env = " ".join(f"{name}={shlex.quote(str(filled(value, places)))}" for name, value in entry.recipe.env.items())
        print(f"{entry.requirement}: {env + ' ' if env else ''}{shlex.join(words)}")


def summary(document: dict, kind: str) -> str:
    """The README's summary of the table for one kind (server, host): per check, how many subjects showed the
    defect (R) of those judged (R or not), and how many gave no verdict (inconclusive, not applicable, error)."""
    holder = runner.KINDS[kind]
    runs = [run for run in document["runs"] if kind in run]
    subjects = len({run[kind]["label"] for run in runs})
    counts = {check: Counter(run["verdict"] for run in runs if run["case"] == check) for check in holder.probes}
    shown = {check: counted[Outcome.REPRODUCED] for check, counted in counts.items()}
    judged = {check: shown[check] + counted[Outcome.NOT_REPRODUCED] for check, counted in counts.items()}
    undecided = {check: counted.total() - judged[check] for check, counted in counts.items()}

    def row(title: str, values: dict[str, object]) -> str:
        return f"| {title} | {' | '.join(str(value) for value in values.values())} |"

    rows = [
        row(f"{kind}s ({subjects})", dict(zip(holder.probes, holder.probes, strict=True))),
        "|---|" + "---|" * len(holder.probes),
        row("show the defect", shown),
        row("judged (R or –)", judged),
        row("no verdict (?, n/a, error)", undecided),
    ]
    return "\n".join(rows) + "\n"


COMMANDS = ("install", "run", "matrix", "summary")


def main(argv_: list[str] | None = None) -> int:
    argv_ = sys.argv[1:] if argv_ is None else argv_
    command = argv_[0] if argv_ and argv_[0] in COMMANDS else "install"
    parser = argparse.ArgumentParser(prog=f"python -m tests.ecosystem {command}", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="packages, comma-separated (default: every entry with a recipe or adapter)")
    if command != "matrix":
        work = ECOSYSTEM_CACHE / "work"
        parser.add_argument("--work", type=Path, default=work, help="where the placeholders' files go")
    if command == "run":
        parser.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    if command == "summary":
        parser.add_argument("results", type=Path, nargs="?", default=RESULTS, help="the table's results file")
    args = parser.parse_args(argv_[1:] if argv_ and argv_[0] == command else argv_)
    listed = load()
    try:
        entries = chosen(listed, args.only)
    except ValueError as exc:
        parser.error(str(exc))
    if command == "summary":
        document = record.stored(args.results)
        print("\n".join(summary(document, kind) for kind in ("server", "host")), end="")
    elif command == "matrix":
        print(json.dumps(matrix(entries)))
    elif command == "run":
        record.check_writable(args.out)
        merged = run(entries, listed, args.out, args.work)
        print(f"{len(merged['runs'])} runs of {len(entries)} subjects written to {args.out}", file=sys.stderr)
    else:
        install_all(entries, files(args.work))
    return 0


if __name__ == "__main__":
    sys.exit(main())

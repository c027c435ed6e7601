"""The ecosystem's table: the most downloaded stdio MCP servers and hosts, as tests/ecosystem.toml lists them.

    python -m tests.ecosystem [--only PACKAGE,...]

The file holds the rule that chose them, the date the registries' figures were read, and per entry its
registry, pinned version, figure, language and runtime, and either a recipe (servers: the program of the
package, the arguments and environment a user would give it, a large and a slow call where a tool allows;
hosts: the adapter under examples/hosts/) or the reason it has none. load() reads it (the stdlib's tomllib);
install() puts a server's pinned package into a cache of its own (ECOSYSTEM_CACHE: an npm prefix or a venv
per package, built and reused as tests/third_party.py builds its servers); argv() is the command a host
would run. Run as a module it installs every server with a recipe, one after another, and prints each
command line: a package that fails to install is named on stderr, the others go on.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tests import third_party

LIST = Path(__file__).with_suffix(".toml")
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
    started: str | None  # servers: what a start by hand showed (the date, initialize answered or why not)

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


def main(argv_: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="packages, comma-separated")
    parser.add_argument("--work", type=Path, default=ECOSYSTEM_CACHE / "work", help="where the placeholders' files go")
    args = parser.parse_args(argv_)
    only = args.only.split(",") if args.only else None
    places = files(args.work)
    for entry in load().servers:
        if entry.recipe is None or (only and entry.package not in only):
            continue
        try:
            words = argv(entry, places)
        except (third_party.Unavailable, RuntimeError) as exc:
            print(f"{entry.requirement}: not installed: {exc}", file=sys.stderr)
            continue
        env = " ".join(f"{name}={shlex.quote(str(filled(value, places)))}" for name, value in entry.recipe.env.items())
        print(f"{entry.requirement}: {env + ' ' if env else ''}{shlex.join(words)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

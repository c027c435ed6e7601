"""The command line of the subjects: the servers of `server`, the hosts of `host` (and of `matrix`).

    server "mcp-server-git --repository REPO" --large-call 'git_log {"repo_path": "REPO"}'
    server "python my_server.py" --slow-call 'slow {"seconds": 0.5}'
    server "uvx mcp-server-time" --name time --protocol legacy --server "uvx mcp-server-time"

The first subject is the command's COMMAND, each further one a --server (or --host); the older
form --server COMMAND is the same. --large-call, --slow-call, --name, --protocol and --sequential-arms belong
to the server given just before them (each at most once per server), so several servers each get their
own (one command twice, once per era). In the fast method a server's arms run side by side, each start in a
sandbox of its own (its HOME, XDG folders, TMPDIR, working folder), unless --sequential-arms says they take
turns (copies that share a port or a path on their command line); different servers' arms run side by side
always. Everything is checked here, before anything is
spawned: a command shlex cannot split or whose program is not found, arguments that are not a JSON
object, an era not known: ServerArgsError; a --large-call, --slow-call, --name, --protocol or
--sequential-arms with no server before it: parser.error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import shutil

from stdio_probe.core.eras import ERAS
from stdio_probe.core.model import ChildEnv, Host, Server, printable


class ServerArgsError(Exception):
    """Bad server arguments: one line for the user (cli maps it to exit 2)."""


class _ServerAction(argparse.Action):
    """COMMAND, --server and --host append a subject; --large-call, --slow-call, --name... set a field of the last."""

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        given = getattr(namespace, self.dest)
        if self.const in ("command", "host"):
            setattr(namespace, self.dest, [*given, {"command": value, "kind": self.const}])
            return
        if not given:
            before = "--server or --host" if self.const == "name" else "--server"
            parser.error(f"{option_string} applies to the {before} before it, and none was given")
        option = "--server" if given[-1]["kind"] == "command" else "--host"
        if self.const in given[-1]:
            parser.error(f"{option_string} given twice for {option} {given[-1]['command']!r}")
        given[-1][self.const] = True if self.const == "sequential_arms" else value


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The subjects of the server command (its COMMAND, --server, --large-call, --slow-call, --name, --protocol,
    --sequential-arms), of the host command (its COMMAND, --host, --name), or of matrix (--host, --name:
    a matrix of host checks)."""
    kind = "command" if command == "server" else "host"
    common = {"dest": "servers", "default": [], "action": _ServerAction}
    if command == "server":
        group = parser.add_argument_group(
            "servers", "--large-call to --sequential-arms below: for the server before them"
        )
        group.add_argument(
            "servers", metavar="COMMAND", action=_ServerAction, const=kind, default=[],
            help="a server command line (split as a shell would, run by no shell)",
        )
        group.add_argument("--server", metavar="COMMAND", const=kind, **common, help="one more server; repeatable")
        group.add_argument(
            "--large-call",
            metavar="'TOOL {JSON}'",
            const="large_call",
            **common,
            help="a tools/call whose answer is larger than the pipe (S2): tool name, JSON arguments",
        )
        group.add_argument(
            "--slow-call",
            metavar="'TOOL {JSON}'",
            const="slow_call",
            **common,
            help="a tools/call that takes 0.5 s or more to answer (S13: stdin closed while it runs)",
        )
    else:
        group = parser.add_argument_group("hosts", "--name applies to the host before it")
        if command == "host":
            group.add_argument(
                "servers", metavar="'COMMAND {server}'", action=_ServerAction, const=kind, default=[],
                help="a host command line whose {server} word the probe's scenario server replaces",
            )
        group.add_argument(
            "--host", metavar="'COMMAND {server}'", const=kind, **common,
            help="one more host; repeatable" if command == "host" else "a host command line; repeatable",
        )
    group.add_argument(
        "--name",
        metavar="LABEL",
        const="label",
        **common,
        help="the server's or host's label in the report and --expect (default: its program's name); printable text "
        "only (a control character or ESC is refused)",
    )
    if command == "server":
        group.add_argument(
            "--protocol",
            metavar="ERA",
            const="protocol",
            **common,
            help=f"speak this era only: {' or '.join(ERAS)} (default: server/discover finds it, else initialize)",
        )
        group.add_argument(
            "--sequential-arms",
            const="sequential_arms",
            nargs=0,
            **common,
            help="run its arms one at a time: its copies share a port or a path on its command line (default, "
            "fast method: side by side, each in a sandbox of its own: HOME, XDG folders, TMPDIR, working folder; "
            "a check found reproduced or inconclusive is rerun one at a time, and a disagreement reported)",
        )


def servers(given: list[dict], env: ChildEnv | None = None) -> list[Server]:
    """The Servers the arguments describe, labels made unique, each given env (env_args);
    ServerArgsError on anything that cannot run."""
    found, labels = [], set()
    for entry in given:
        if entry["kind"] != "command":
            continue
        command = entry["command"]
        label = _label(entry, _argv("--server", command), labels, "servers")
        large, slow, protocol = entry.get("large_call"), entry.get("slow_call"), entry.get("protocol")
        if protocol is not None and protocol not in ERAS:
            raise ServerArgsError(f"--protocol {protocol!r}: one of {', '.join(ERAS)}")
        large = None if large is None else tool_call(large)
        slow = None if slow is None else tool_call(slow, "--slow-call")
        alone = entry.get("sequential_arms", False)
        found.append(Server(label, command, large, protocol, env or ChildEnv(), sequential_arms=alone, slow_call=slow))
    return found


def tool_call(text: str, flag: str = "--large-call") -> tuple[str, dict]:
    """'TOOL {JSON}' (of flag: --large-call, --slow-call) -> (tool, arguments); the arguments may be left out ({})."""
    tool, _, arguments = text.strip().partition(" ")
    if not tool:
        raise ServerArgsError(f"{flag}: no tool name")
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except RecursionError:
        raise ServerArgsError(f"{flag} {text[:60]!r}: arguments nest too deeply") from None
    except ValueError as exc:
        raise ServerArgsError(f"{flag} {text!r}: arguments are not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ServerArgsError(f"{flag} {text!r}: arguments must be a JSON object")
    return tool, parsed


def hosts(given: list[dict], env: ChildEnv | None = None) -> list[Host]:
    """The Hosts the arguments describe, labels made unique, each given env (env_args); ServerArgsError on a
    command that cannot run or has no {server} word."""
    found, labels = [], set()
    for entry in given:
        if entry["kind"] != "host":
            continue
        command = entry["command"]
        label = _label(entry, _argv("--host", command, needs_server_word=True), labels, "hosts")
        found.append(Host(label, command, env or ChildEnv()))
    return found


def _argv(flag: str, command: str, needs_server_word: bool = False) -> list[str]:
    """command split into words, its program found on PATH (and, for a host, a {server} word among them);
    ServerArgsError, naming flag, when it cannot run."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ServerArgsError(f"{flag} {command!r}: {exc}") from None
    if not argv:
        raise ServerArgsError(f"{flag}: empty command")
    if needs_server_word and not any("{server}" in word for word in argv):
        raise ServerArgsError(f"{flag} {command!r}: no {{server}} word (where the probe's server goes)")
    if shutil.which(argv[0]) is None:
        raise ServerArgsError(f"{flag} {command!r}: {argv[0]} not found (not on PATH, or not executable)")
    return argv


def _label(entry: dict, argv: list[str], labels: set[str], kind: str) -> str:
    """The entry's label (--name, else its program's name), added to labels: a repeated program's gets
    " #2", " #3"...; a repeated --name is an error (kind: "servers" or "hosts"), and so is one that every
    output would have to show escaped (control characters, ESC, invalid UTF-8: model.printable), a tab or
    a newline."""
    label = entry.get("label") or os.path.basename(argv[0])
    if "label" in entry and (printable(label) != label or "\t" in label or "\n" in label):
        raise ServerArgsError(f"--name {label!r}: control characters or invalid UTF-8; name it in plain text")
    if label in labels:
        if "label" in entry:
            raise ServerArgsError(f"--name {label!r} names two {kind}")
        label = next(f"{label} #{n}" for n in itertools.count(2) if f"{label} #{n}" not in labels)
    labels.add(label)
    return label

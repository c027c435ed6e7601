"""--env and --inherit-env: what a server (or host) under test gets of the probe's environment,
and keeping the values given that way out of everything the probe writes.

    --server "uvx some-server" --env API_URL=https://example.test --env GITHUB_TOKEN

By default a subject gets what a host would give it (spawn.child_env: HOME, LOGNAME, PATH,
SHELL, TERM, USER, and the probe's markers). --env NAME passes NAME from the probe's
environment, --env NAME=VALUE sets it; both repeatable, for every subject of the run.
--inherit-env passes the probe's whole environment, secrets included.

The command line is recorded (results.json's metadata.argv) with NAME=*** for NAME=VALUE, and
every value given with --env (either form, when at least SECRET_MIN_CHARS long) is replaced by
*** in every string of the runs before anything is written: a server may echo it on stderr.
"""

from __future__ import annotations

import argparse
import os
from typing import TypeVar

from stdio_probe import spawn
from stdio_probe.model import ChildEnv

MASK = "***"
SECRET_MIN_CHARS = 4  # shorter values ("1", "on") would mask unrelated text everywhere; argv masks them still
RESERVED = spawn.MARKERS

T = TypeVar("T")


class EnvArgsError(Exception):
    """A bad --env: one line for the user (cli maps it to exit 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--env and --inherit-env, in a group of their own."""
    group = parser.add_argument_group(
        "environment of a server under test",
        "default: what an MCP host gives it: HOME, LOGNAME, PATH, SHELL, TERM, USER",
    )
    group.add_argument(
        "--env",
        metavar="NAME[=VALUE]",
        action="append",
        default=[],
        help="pass NAME from this environment, or set NAME=VALUE (recorded as NAME=***); repeatable",
    )
    group.add_argument(
        "--inherit-env",
        action="store_true",
        help="pass this whole environment (unsafe in CI: a server can read every token in it)",
    )


def resolve(given: list[str], inherit: bool, environ: dict[str, str] | None = None) -> ChildEnv:
    """The ChildEnv the arguments describe; EnvArgsError for a bad name, a name given twice, or
    NAME not set in the probe's environment (checked before anything is spawned)."""
    environ = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for text in given:
        name, has_value, value = text.partition("=")
        if not name or "\0" in text:
            raise EnvArgsError(f"--env {text.split('=')[0]!r}: not a variable name (NAME or NAME=VALUE)")
        if name in RESERVED:
            raise EnvArgsError(f"--env {name}: one of the probe's markers, which only the probe sets")
        if name in values:
            raise EnvArgsError(f"--env {name} given twice")
        if not has_value and name not in environ:
            raise EnvArgsError(f"--env {name}: not set in the probe's environment")
        values[name] = value if has_value else environ[name]
    return ChildEnv(values, inherit)


def masked_argv(argv: list[str]) -> list[str]:
    """argv with the value of every --env NAME=VALUE (or --env=NAME=VALUE) replaced by ***."""
    masked, after_env = [], False
    for word in argv:
        if after_env and "=" in word:
            word = f"{word.partition('=')[0]}={MASK}"
        elif word.startswith("--env=") and "=" in word[len("--env=") :]:
            word = f"--env={word[len('--env=') :].partition('=')[0]}={MASK}"
        masked.append(word)
        after_env = word == "--env"
    return masked


def redact(document: T, env: ChildEnv) -> T:
    """document (JSON-like: dicts, lists, strings) with every --env value of SECRET_MIN_CHARS or more
    replaced by *** in its strings; keys and other values as they were."""
    secrets = sorted({v for v in env.values.values() if len(v) >= SECRET_MIN_CHARS}, key=len, reverse=True)
    if not secrets:
        return document

    def scrub(value):
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, MASK)
            return value
        if isinstance(value, dict):
            return {key: scrub(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [scrub(item) for item in value]
        return value

    return scrub(document)

"""--env and --inherit-env: what a server (or host) under test gets of the probe's environment,
and keeping secrets out of everything the probe writes or prints.

    --server "uvx some-server" --env API_URL=https://example.test --env GITHUB_TOKEN

By default a subject gets what a host would give it (spawn.child_env: HOME, LOGNAME, PATH,
SHELL, TERM, USER, and the probe's markers). --env NAME passes NAME from the probe's
environment (the way to pass a secret: the probe's command line is readable by every process
while it runs), --env NAME=VALUE sets it; both repeatable, for every subject of the run.
--inherit-env passes the probe's whole environment, secrets included.

A subject can read more than it is given (its parent's /proc/PID/environ, where the probe does
not stop it: a subject running as root), and prints what it likes. So one Redactor per run masks
(***) in every string the probe writes or prints: the values of the probe's environment that are
secrets by name (SECRET_NAME) or by form (TOKEN_FORM), every value given with --env, and any
token form, wherever it came from. The command line is recorded (results.json's metadata.argv)
with NAME=*** for NAME=VALUE.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TextIO, TypeVar

from stdio_probe.core import spawn
from stdio_probe.core.model import ChildEnv

MASK = "***"
SECRET_MIN_CHARS = 4  # shorter values ("1", "on") would mask unrelated text everywhere; argv masks them still
# a secret found by its name, not named by the user: XDG_SESSION_CLASS=user would mask "user" everywhere
ENV_SECRET_MIN_CHARS = 8
RESERVED = spawn.MARKERS

T = TypeVar("T")


class EnvArgsError(Exception):
    """A bad --env: one line for the user (cli maps it to exit 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--env and --inherit-env, in a group of their own."""
    group = parser.add_argument_group(
        "environment of a server under test",
        "default: what an MCP host gives it: HOME, LOGNAME, PATH, SHELL, TERM, USER;\n"
        "a server's HOME, XDG folders, TMPDIR and working folder are a sandbox's of its\n"
        "own (--env HOME: the probe's)",
    )
    group.add_argument(
        "--env",
        metavar="NAME[=VALUE]",
        action="append",
        default=[],
        help=(
            "pass NAME from this environment (the way to pass a secret), or set NAME=VALUE (readable on the "
            "probe's command line while it runs; recorded as NAME=***); repeatable"
        ),
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


def _env_words(argv: list[str]) -> Iterator[tuple[int, str]]:
    """(index, the word's NAME[=VALUE] part) of every --env argument of argv: --env WORD or --env=WORD."""
    for at, word in enumerate(argv):
        if at and argv[at - 1] == "--env":
            yield at, word
        elif word.startswith("--env="):
            yield at, word[len("--env=") :]


def masked_argv(argv: list[str]) -> list[str]:
    """argv with the value of every --env NAME=VALUE (or --env=NAME=VALUE) replaced by ***."""
    masked = list(argv)
    for at, given in _env_words(argv):
        name, has_value, _ = given.partition("=")
        if has_value:
            masked[at] = masked[at][: len(masked[at]) - len(given)] + f"{name}={MASK}"
    return masked


# the name of a variable whose value is taken for a secret, wherever it appears
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
# the forms of the usual API tokens (GitHub, GitLab, OpenAI and Anthropic, Slack, npm, PyPI, AWS, Google, a JWT):
# masked in any text, from the environment or not, so a token cut short by a bound (stderr's last bytes,
# an answer's first 80 characters) is masked while enough of it is left to be told
TOKEN_FORM = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:gh[pousr]_|github_pat_|glpat-|sk-|xox[abpr]-|npm_|pypi-)[A-Za-z0-9_-]{8,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[A-Za-z0-9_-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?"
    r")"
)


class Redactor:
    """The one place secrets are masked: every string the probe writes or prints passes through it.

    Each secret is masked as it is and as it appears inside a JSON string (a \\ or " escaped), so a
    server that echoes it in a JSON line it writes is masked too; then every TOKEN_FORM match.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for secret in secrets for form in (secret, json.dumps(secret)[1:-1])}
        self._secrets = sorted(forms, key=len, reverse=True)  # a secret inside a longer one: the longer first

    def text(self, value: str) -> str:
        """value with every secret, and every token form, replaced by ***."""
        for secret in self._secrets:
            value = value.replace(secret, MASK)
        return TOKEN_FORM.sub(MASK, value)

    def __call__(self, document: T) -> T:
        """document (JSON-like: dicts, lists, strings) with its strings masked; keys and other values as they were."""
        if isinstance(document, str):
            return self.text(document)
        if isinstance(document, dict):
            return {key: self(item) for key, item in document.items()}
        if isinstance(document, list | tuple):
            return [self(item) for item in document]
        return document


def redactor(argv: list[str], environ: Mapping[str, str] | None = None) -> Redactor:
    """The run's redactor, built before argv is parsed (so no error line escapes it): the values of the
    probe's environment that are secrets by name (SECRET_NAME) or hold a token form, at least
    ENV_SECRET_MIN_CHARS long, and every value given with --env in argv, at least SECRET_MIN_CHARS long."""
    environ = os.environ if environ is None else environ
    found = [v for n, v in environ.items() if SECRET_NAME.search(n) or TOKEN_FORM.search(v)]
    given = []
    for _, word in _env_words(argv):
        name, has_value, value = word.partition("=")
        given.append(value if has_value else environ.get(name, ""))
    return Redactor(
        [v for v in found if len(v) >= ENV_SECRET_MIN_CHARS] + [v for v in given if len(v) >= SECRET_MIN_CHARS]
    )


class MaskedStream:
    """A text stream (stdout, stderr) that masks what is written to it: the last guard of every printed line.

    Records are masked before they are reported; this catches what reaches a console by another way
    (an error line, an exception's message). Everything else is the stream's own (isatty, fileno, flush).
    """

    def __init__(self, stream: TextIO, redact: Redactor) -> None:
        self._stream, self._redact = stream, redact

    def write(self, text: str) -> int:
        return self._stream.write(self._redact.text(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

"""results.json: the metadata of this run, the runs, and an atomic write.

Every version of the schema, what it added and how an older file is read as the current one:
record_history.py. read gives every reader the current shape, whatever version the file has.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import NotRequired, TypedDict

from stdio_probe import __version__, package_file
from stdio_probe.core import env_args, sample
from stdio_probe.core.host_contract import pidfd_support
from stdio_probe.core.model import Options
from stdio_probe.core.outcome import MEANING, Outcome
from stdio_probe.report import record_history
from stdio_probe.sdk import envs

SCHEMA_VERSION = max(record_history.VERSIONS)
SCHEMA_PATH = package_file("results.schema.json")


class Trials(TypedDict):
    """A repeated arm's rate (runner.run_trials): trials run, how many of them showed the defect, and why a trial
    that did not show it ended them (Probe.settles)."""

    run: int
    shown: int
    settled: NotRequired[str]


class ArmRecord(TypedDict, total=False):
    """The facts any arm may carry (results.schema.json, an arm); each probe's run_arm adds its own beside them.

    error and not_applicable say the arm gave no evidence (decide filters them before any assess);
    the runner adds started_at and duration_s (and a repeated arm's trials); spawn.Child.record gives the exit
    facts.
    """

    error: str
    traceback: str
    not_applicable: str
    started_at: float
    duration_s: float
    pid: int
    exit_code: int | None
    signal: str | None
    ended_by: str | None
    launch: str
    fork_server_unavailable: str
    stderr: str
    trials: Trials


class Mitigation(TypedDict, total=False):
    """Whether the host contract held on the mitigated arm (None: not evaluated), why, and its status in one
    word (decide.mitigation, an outcome.Contract)."""

    held: bool | None
    note: str
    status: str


class Run(TypedDict, total=False):
    """One run of results.json: a probe against one subject, held in exactly one of sdk, server or host."""

    case: str
    sdk: dict
    server: dict
    host: dict
    verdict: str
    reason: str
    headline: str
    pairs: dict[str, dict]
    mitigation: Mitigation
    arms: dict[str, ArmRecord]


SUBJECTS = ("sdk", "server", "host")  # the key a run's subject is held under


def make_run(case: str, holder: str, subject: dict, decided: dict, held: Mitigation, arms: dict[str, ArmRecord]) -> Run:
    """A run as results.json holds it: decided is decide's verdict, reason, headline (and pairs)."""
    if holder not in SUBJECTS:
        raise ValueError(f"a run's subject is one of {SUBJECTS}, not {holder!r}")
    return {"case": case, holder: subject, **decided, "mitigation": held, "arms": arms}  # type: ignore[misc]


def default_pipe_capacity() -> int:
    """The capacity of a fresh pipe on this host (64 KiB by Linux default)."""
    read_fd, write_fd = os.pipe()
    try:
        return sample.pipe_fill(read_fd)["capacity"]
    finally:
        os.close(read_fd)
        os.close(write_fd)


def metadata(options: Options, argv: list[str], started: datetime.datetime) -> dict:
    """Facts about this host and this invocation, hoisted out of the runs."""
    return {
        "probe_version": __version__,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "argv": argv,
        "platform": platform.platform(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "probe_python": platform.python_version(),
        "pipe_capacity": default_pipe_capacity(),
        "method": options.method,
        "window_s": options.window,
        "signals": pidfd_support(),  # how every signal reaches only a process of ours (host_contract.Pidfd)
    }


def results(meta: dict, runs: list[dict]) -> dict:
    return {"schema_version": SCHEMA_VERSION, "metadata": meta, "runs": runs}


def subject(run: dict) -> str:
    """What a run was made against, the key of every grouping: the SDK's spec, or the server's or host's label."""
    for holder in ("server", "host"):
        if holder in run:
            return run[holder]["label"]
    return run["sdk"]["spec"]


def subject_title(run: dict) -> str:
    """The subject as a reader wants it named: with the mcp version an SDK spec resolved to."""
    name = subject(run)
    host = run.get("host", {})
    if host.get("era"):
        shape = "" if host["servers"] == "one server" else f", {host['servers']}"
        return f"{name} ({host['era']} era{shape})"
    version = run.get("sdk", {}).get("version")
    return f"{name} (mcp {version})" if version and version != name else name


class ResultsError(Exception):
    """A results file that cannot be read or does not match the schema: one line for the user."""


def read(path: Path) -> dict:
    """A results file of any schema version up to this one, in this version's shape (record_history.upgrade)."""
    return record_history.upgrade(stored(path))


def stored(path: Path) -> dict:
    """A results file as it was written, of any schema version up to this one, with the fields every reader
    keys on; --merge takes it so (only files of this version, validated against the schema)."""
    try:
        document = read_json(path)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: {exc}") from None
    version = document.get("schema_version") if isinstance(document, dict) else None
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultsError(f"{path}: not a results file of schema_version 1 to {SCHEMA_VERSION}")
    runs = document.get("runs")
    if not isinstance(runs, list) or not all(_keyed(run, version) for run in runs):
        raise ResultsError(
            f"{path}: runs must each have a case, a verdict ({', '.join(Outcome)}), a reason, arms, a mitigation"
            " (from schema 2 on), and an sdk spec or a server or host label"
        )
    return document


def read_json(path: Path) -> object:
    """The JSON document in a regular file. OSError for one that is not a regular file (a FIFO would block
    the read forever, a device never end), ValueError for text that is not JSON or nests too deeply."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(f"{path} is not a regular file")
    try:
        return json.loads(path.read_text())
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _keyed(run: object, version: int) -> bool:
    """Whether a run has what every reader, and every step of record_history, keys on."""
    if not isinstance(run, dict) or not {"case", "verdict", "reason", "arms"} <= run.keys():
        return False
    if not isinstance(run["case"], str) or not isinstance(run["reason"], str):
        return False
    if not isinstance(run["verdict"], str) or run["verdict"] not in MEANING:
        return False
    if not isinstance(run["arms"], dict) or (version >= 2 and not isinstance(run.get("mitigation"), dict)):
        return False
    holder, key = next(((h, "label") for h in ("server", "host") if h in run), ("sdk", "spec"))
    return isinstance(run.get(holder), dict) and isinstance(run[holder].get(key), str)


def validate(document: dict, where: str) -> None:
    """ResultsError unless document is a valid results file of this schema version."""
    import jsonschema  # only merging validates: a run writes what the schema describes

    try:
        jsonschema.validate(document, json.loads(SCHEMA_PATH.read_text()))
    except jsonschema.ValidationError as exc:
        path = "/".join(str(part) for part in exc.absolute_path) or "the document"
        raise ResultsError(f"{where}: {path}: {exc.message}") from None


def check_writable(path: Path) -> None:
    """Raise OSError now, before anything is spawned, if path cannot be written later.

    Tries a real file in the target folder: permission bits say nothing for root or on /proc.
    """
    if path.is_dir():
        raise OSError(f"{path} is a folder")
    if path.exists() and not path.is_file():
        raise OSError(f"{path} is not a regular file")
    if path.exists() and not os.access(path, os.W_OK):
        raise OSError(f"{path} is not writable")
    folder = path.resolve().parent
    if not folder.is_dir():
        raise OSError(f"folder {folder} does not exist")
    with tempfile.NamedTemporaryFile(prefix=f".{path.name}.", dir=folder):
        pass


def dumps(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def written(document: dict) -> str:
    """A results document as a file or stdout gets it: its machine paths made portable (portable)."""
    return dumps(portable(document))


def write_atomic(path: Path, document: dict) -> None:
    write_text_atomic(path, written(document))


def write_text_atomic(path: Path, text: str) -> None:
    """Write beside the target, then rename: a reader sees the old file or the whole new one."""
    folder = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary name only
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


ARG_CAP = 500  # characters of one argument kept in metadata.argv (a --large-call's JSON can be 90 KB)


def main_argv() -> list[str]:
    """This invocation's command line as recorded: --env NAME=VALUE as NAME=*** (env_args), each argument
    bounded to ARG_CAP characters."""
    argv = env_args.masked_argv([Path(sys.argv[0]).name, *sys.argv[1:]])
    return [arg if len(arg) <= ARG_CAP else arg[: ARG_CAP - 1] + "…" for arg in argv]


CUT = "…"  # what a text cut short ends with (model.shorten, a command's or a cmdline's cap)
# A place's path is matched whole: where a path starts (not inside one, as /home/ana is in /data/home/ana), up to a
# "/" or a character that ends a path in a command line, a repr, a traceback or a sentence
_STARTS = r"(?<![\w.~+@%-])(?<![\w.~+@%-]/)"
_ENDS = r"(?=[/\s'\"`:;,=)\]}>\\]|\Z|[.!?](?:\s|\Z)|" + CUT + ")"
_NAME = r"[^/\s'\"`:;,=)\]}>\\" + CUT + "]"
_CUT_PATH = f"/{_NAME}+/(?:{_NAME}|/)+(?={CUT})"  # past its first folder: "/home/…" says nothing, "/ro…" little


def places() -> dict[str, str]:
    """This machine's folders a results document can name, each with the name a file written gets in its place:
    the checkout the probe runs from (<repo>; an installed probe has none: its parent folder is site-packages),
    the probe's cache (<cache>: the SDK environments, the tests' servers and hosts), the home folder (~) and
    the temporary folder (<tmp>: every run's folder is in it). Each as given and with its links resolved;
    never the root folder, which every path is under."""
    checkout = Path(__file__).resolve().parents[2]
    named = {str(envs.probe_cache()): "<cache>", str(Path.home()): "~", tempfile.gettempdir(): "<tmp>"}
    if (checkout / "probe_stdio_lifecycle.py").is_file():
        named[str(checkout)] = "<repo>"  # last: a checkout that is the home folder is named as the checkout
    found = {each: name for path, name in named.items() for each in (os.path.abspath(path), os.path.realpath(path))}
    return {path: name for path, name in found.items() if path != "/"}


def portable(document: dict, where: dict[str, str] | None = None) -> dict:
    """document with every path under a place of this machine (where: {path: name}, places() by default) written
    from that place: <repo>/examples/..., <cache>/envs/..., ~/..., <tmp>/probe-run-.../..., the innermost place
    first, in every string (keys too): argv, commands, environment values, cmdlines, stderr, notes. A place's
    path cut short (…) is its name and the …. A committed file then names no machine's folders, and a
    reader can still tell which folder a path was in. Text that merely holds a slash is left as it is, and so
    is an SDK's spec (--sdk PATH, --python PATH): the subject's name as given, what --expect, compare and merge
    key runs on."""
    where = places() if where is None else where
    if not where:
        return document
    whole = "|".join(re.escape(path) for path in sorted(where, key=len, reverse=True))
    pattern = re.compile(f"{_STARTS}(?:(?P<whole>{whole}){_ENDS}|(?P<cut>{_CUT_PATH}))")
    outer_first = sorted(where, key=len)

    def named(match: re.Match) -> str:
        if match["whole"] is not None:
            return where[match["whole"]]
        cut = match["cut"]
        return next((where[path] for path in outer_first if path.startswith(cut) and path != cut), cut)

    def rewrite(value: object) -> object:
        if isinstance(value, str):
            return pattern.sub(named, value) if "/" in value else value
        if isinstance(value, list):
            return [rewrite(item) for item in value]
        if isinstance(value, dict):
            return {rewrite(key): rewrite(item) for key, item in value.items()}
        return value

    written: dict = rewrite(document)  # type: ignore[assignment]
    for run, given in zip(written.get("runs", ()), document.get("runs", ()), strict=True):
        if "spec" in given.get("sdk", {}):
            run["sdk"]["spec"] = given["sdk"]["spec"]
    return written

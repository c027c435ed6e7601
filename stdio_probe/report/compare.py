"""Across runs: compare two results files, list a selection as a CI matrix, merge the shards' results.

Every key is (record.subject(run), case): an SDK's spec as given ("pinned", "2.3.0", a path)
or a server's or host's label, so a pinned run and a run of the same version from PyPI are different rows.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text

from stdio_probe.core.model import Host
from stdio_probe.report import record
from stdio_probe.report.ci_output import markdown_table
from stdio_probe.report.record import ResultsError, subject, subject_title
from stdio_probe.report.report import COMPACT, verdict_text
from stdio_probe.sdk.sdk import Request

MISSING = "absent"
# metadata that must agree between shards, or the merged file's metadata would say something false
SHARD_AGREE = ("probe_version", "method", "window_s")


@dataclass(frozen=True)
class Change:
    subject: str
    case: str
    old: str
    new: str


def changes(old: dict, new: dict) -> tuple[list[Change], int]:
    """The (subject, case) pairs whose verdict differs, a run present in one file only included; and how many agree."""
    before = {(subject(run), run["case"]): run["verdict"] for run in old["runs"]}
    after = {(subject(run), run["case"]): run["verdict"] for run in new["runs"]}
    titles = {subject(run): subject_title(run) for run in [*old["runs"], *new["runs"]]}
    keys = sorted(before.keys() | after.keys(), key=lambda key: (key[0], case_order(key[1])))
    found = [
        Change(titles[name], case, before.get((name, case), MISSING), after.get((name, case), MISSING))
        for name, case in keys
        if before.get((name, case)) != after.get((name, case))
    ]
    return found, len(keys) - len(found)


def _verdict_cell(verdict: str) -> Text:
    return Text(verdict, style="dim") if verdict == MISSING else verdict_text(verdict)


def table(found: list[Change], same: int, names: tuple[str, str]) -> Table:
    caption = f"{same} unchanged" if found else f"no verdict changed ({same} runs)"
    result = Table(title="verdict changes", **COMPACT, caption=caption, caption_justify="left")
    result.add_column("subject", no_wrap=True, overflow="ellipsis", max_width=28)
    result.add_column("case", no_wrap=True)
    result.add_column(names[0], overflow="fold")
    result.add_column(names[1], overflow="fold")
    for change in found:
        result.add_row(Text(change.subject), change.case, _verdict_cell(change.old), _verdict_cell(change.new))
    return result


def markdown(found: list[Change], same: int, names: tuple[str, str]) -> str:
    heading = f"## Verdict changes: `{names[0]}` → `{names[1]}`\n\n"
    if not found:
        return heading + f"No verdict changed ({same} runs).\n"
    rows = [[c.subject, c.case, c.old, c.new] for c in found]
    return heading + markdown_table(["subject", "case", names[0], names[1]], rows) + f"\n{same} unchanged.\n"


def matrix(requests: list[Request], case_ids: list[str]) -> dict:
    """A GitHub Actions matrix ({"include": [...]}), one entry per SDK and case.

    Each entry's args select just that pair; name is safe in file and artifact names.
    """
    include = []
    for request in requests:
        if request.spec == "pinned":
            select = []
        elif request.source == "interpreter":
            select = ["--python", request.spec]
        else:
            select = ["--sdk", request.spec]
        for case_id in case_ids:
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{request.spec}-{case_id}").strip("_")
            args = shlex.join([*select, "--only", case_id])
            include.append({"sdk": request.spec, "case": case_id, "name": name, "args": args})
    return {"include": include}


def host_matrix(hosts: list[Host], check_ids: list[str]) -> dict:
    """A GitHub Actions matrix of host checks, one entry per host and check; args select just that pair."""
    include = []
    for host in hosts:
        for check_id in check_ids:
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{host.label}-{check_id}").strip("_")
            args = shlex.join(["--host", host.command, "--name", host.label, "--only", check_id])
            include.append({"host": host.label, "case": check_id, "name": name, "args": args})
    return {"include": include}


def case_order(case_id: str) -> tuple[str, int, str]:
    """L2 before L10, S6a before S6b before S7: the letters, the number, then its suffix."""
    match = re.fullmatch(r"([A-Za-z]*)(\d+)([a-z]*)", case_id)
    return (match[1], int(match[2]), match[3]) if match else (case_id, 0, "")


SUBJECTS_DESCRIBED = ("servers", "hosts")  # metadata a table's run adds: label -> what the subject was installed from


def merge(paths: list[Path], argv: list[str]) -> dict:
    """One results file of every shard's runs, validated against the schema; ResultsError on any conflict."""
    documents = []
    for path in paths:
        document = record.stored(path)
        if document["schema_version"] != record.SCHEMA_VERSION:
            found = document["schema_version"]
            raise ResultsError(f"{path}: schema_version {found}, --merge takes {record.SCHEMA_VERSION}")
        record.validate(document, str(path))
        documents.append(document)
    first = documents[0]["metadata"]
    for path, document in zip(paths[1:], documents[1:], strict=True):
        for key in SHARD_AGREE:
            if document["metadata"][key] != first[key]:
                raise ResultsError(f"{path}: {key} {document['metadata'][key]!r}, but {paths[0]} has {first[key]!r}")
    origin: dict[tuple[str, str], Path] = {}
    runs = []
    for path, document in zip(paths, documents, strict=True):
        for run in document["runs"]:
            key = (subject(run), run["case"])
            if key in origin:
                raise ResultsError(f"{run['case']} on {key[0]} is in both {origin[key]} and {path}")
            origin[key] = path
            runs.append(run)
    order = {name: i for i, name in enumerate(dict.fromkeys(key[0] for key in origin))}
    runs.sort(key=lambda run: (order[subject(run)], case_order(run["case"])))
    shards = [document["metadata"] for document in documents]
    described = {key: {} for key in SUBJECTS_DESCRIBED if any(key in m for m in shards)}
    for m in shards:  # what each shard says of its subjects (a table's packages): every subject's, in one map
        for key in described:
            described[key] |= m.get(key, {})
    meta = first | described | {
        "started": min(m["started"] for m in shards),
        "finished": max(m["finished"] for m in shards),
        "argv": argv,
        "leftover_processes": sum(m["leftover_processes"] for m in shards),
        "shards": shards,
    }
    merged = record.results(meta, runs)
    record.validate(merged, "the merged results")
    return merged

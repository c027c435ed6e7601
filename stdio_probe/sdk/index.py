"""The package index's release list of mcp: every version and when it was uploaded (PEP 691 JSON).

A release's cut-off is the upload time of its last file, rounded up to the whole second: an
environment resolved with uv's --exclude-newer at that instant gets the dependencies that were on
the index when the release came out (the release's own files included).

The list is read once per run over HTTPS, every wait bounded; the last list read is kept in the
environment cache, and used (with a note on stderr) when the index cannot be reached. Stdlib only.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from stdio_probe.sdk.facts import SdkError

INDEX_URL = os.environ.get("STDIO_PROBE_INDEX_URL", "https://pypi.org/simple/")
PROJECT = "mcp"
TIMEOUT = 30.0
_ACCEPT = "application/vnd.pypi.simple.v1+json"
_ARCHIVES = (".tar.gz", ".zip", ".tar.bz2")


@dataclass(frozen=True)
class Release:
    """One version on the index: its cut-off (ISO 8601, UTC, whole seconds) and whether every file is yanked."""

    version: str
    cutoff: str
    yanked: bool


_cache: dict[str, list[Release]] = {}


def releases(cache_dir: Path) -> list[Release]:
    """Every release of mcp, in the index's order (oldest first), read once per process."""
    if PROJECT not in _cache:
        _cache[PROJECT] = parse(_fetch(cache_dir / f"index-{PROJECT}.json"))
    return _cache[PROJECT]


def release(version: str, cache_dir: Path) -> Release | None:
    """The release of exactly this version, or None when the index has no such version."""
    return next((r for r in releases(cache_dir) if r.version == version), None)


def parse(document: dict) -> list[Release]:
    """Releases from a PEP 691 project page: its versions, each cut off at its last file's upload."""
    uploads: dict[str, list[tuple[str, bool]]] = {}
    for file in document.get("files", []):
        version = file_version(file["filename"])
        if version and file.get("upload-time"):
            uploads.setdefault(version, []).append((file["upload-time"], bool(file.get("yanked"))))
    found = []
    for version in document.get("versions") or list(uploads):
        files = uploads.get(version)
        if files:
            found.append(Release(version, cutoff(max(t for t, _ in files)), all(y for _, y in files)))
    return found


def file_version(filename: str) -> str | None:
    """The version in a distribution file's name: mcp-1.0.0-py3-none-any.whl, mcp-1.0.0.tar.gz."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return parts[1] if len(parts) >= 5 else None
    for suffix in _ARCHIVES:
        if filename.endswith(suffix) and filename.lower().startswith(f"{PROJECT}-"):
            return filename[len(PROJECT) + 1 : -len(suffix)]
    return None


def cutoff(upload_time: str) -> str:
    """An upload time rounded up to the next whole second, as uv's --exclude-newer takes it."""
    moment = datetime.datetime.fromisoformat(upload_time.replace("Z", "+00:00")).astimezone(datetime.UTC)
    if moment.microsecond:
        moment = moment.replace(microsecond=0) + datetime.timedelta(seconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fetch(saved: Path) -> dict:
    request = urllib.request.Request(f"{INDEX_URL.rstrip('/')}/{PROJECT}/", headers={"Accept": _ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            document = json.loads(response.read())
    except (OSError, ValueError) as exc:
        try:
            document = json.loads(saved.read_text())
        except (OSError, ValueError):
            raise SdkError(f"cannot read mcp's release list from {INDEX_URL}: {exc}") from None
        print(f"note: {INDEX_URL} unreachable ({exc}); using the release list saved in {saved}", file=sys.stderr)
        return document
    try:
        saved.parent.mkdir(parents=True, exist_ok=True)
        tmp = saved.with_name(f".{saved.name}.{os.getpid()}")
        tmp.write_text(json.dumps(document))
        os.replace(tmp, saved)
    except OSError:
        pass  # the saved copy is a convenience for offline runs, never required
    return document

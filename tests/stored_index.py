"""The package index as stored under tests/data/, served over HTTP on localhost for the test session.

The probe reads mcp's release list (versions, upload times) from the index; a test reading the live
index would fail at the next release. tests/data/index-PROJECT.json holds the PEP 691 JSON page of each
project a test needs, as pypi.org/simple/PROJECT/ gave it on 2026-12-04, trimmed to filename, upload-time
and yanked (mcp: every file; pydantic: the 2.10.6 files, which mcp 1.3.0's era-true environment gets).
Installs still come from the real index (once; the environments are cached), only the release list is
stored. To refresh a page: fetch it with the Accept header index._ACCEPT and trim it the same way.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


class _Pages(http.server.BaseHTTPRequestHandler):
    """GET /simple/PROJECT/ -> tests/data/index-PROJECT.json; anything else is 404."""

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        parts = self.path.strip("/").split("/")
        page = DATA / f"index-{parts[-1]}.json" if len(parts) == 2 and parts[0] == "simple" else None
        if page is None or not page.is_file():
            self.send_error(404)
            return
        body = page.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        """Quiet: the tests read what the probe says, not the server's log."""


@contextmanager
def served() -> Iterator[str]:
    """The stored pages on a local port while the block runs; yields the index URL (…/simple/)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()

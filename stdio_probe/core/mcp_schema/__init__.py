"""Judge what a server writes against the MCP schema shipped here (S4): every line, in order.

A line must be one JSON-RPC 2.0 message valid against `JSONRPCMessage` of the protocol revision
the server answered `initialize` with (the revision the probe asked for until then, 2026-07-28 in
that era; an unknown revision is judged by the newest one shipped before it, and the record says
which). A response
must carry the id of a request the probe sent and not yet answered (so nothing answers a
notification), and its result must be valid against that request's result type. The schemas
are the specification repository's own (SOURCE.md); jsonschema, already the probe's pinned
dependency for results.schema.json, validates them: a second validator of our own would be a
second copy of a mechanism that exists.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema

FOLDER = Path(__file__).parent
REVISIONS = tuple(sorted(path.stem for path in FOLDER.glob("*.json")))
ASKED = "2025-11-25"  # the revision wire.INITIALIZE asks for
RESULTS = {  # a request's method -> its result type in the schema
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
}
ERROR_CAP = 160  # characters of a validation error kept


@functools.cache
def _schema(revision: str) -> dict:
    return json.loads((FOLDER / f"{revision}.json").read_text())


@functools.cache
def _validator(revision: str, definition: str) -> jsonschema.protocols.Validator:
    """A validator of one definition of a revision's schema (its $defs, or definitions before 2025-11-25)."""
    schema = _schema(revision)
    where = "$defs" if "$defs" in schema else "definitions"
    root = {**schema, "$ref": f"#/{where}/{definition}"}
    return jsonschema.validators.validator_for(schema)(root)


def revision_for(version: object) -> str:
    """The shipped revision that judges a server speaking version: itself, else the newest one before it."""
    if version in REVISIONS:
        return str(version)
    earlier = [r for r in REVISIONS if isinstance(version, str) and r < version]
    return earlier[-1] if earlier else ASKED


class Exchange:
    """The probe's requests (id -> method) and the server's messages, judged as they come.

    sent() before the request is written; judge() on every message the server writes, in order:
    it returns why the message is not allowed, or None.
    """

    def __init__(self, revision: str = ASKED) -> None:
        self.revision = revision_for(revision)
        self.negotiated: object = None
        self._pending: dict[object, str] = {}

    def sent(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self._pending[message["id"]] = message["method"]

    def judge(self, message: object) -> str | None:
        if (why := _invalid(self.revision, "JSONRPCMessage", message)) is not None:
            return f"not a JSON-RPC message of MCP {self.revision}: {why}"
        assert isinstance(message, dict)
        if "method" in message:
            return None  # a request or notification of the server's (its params are the schema's to judge above)
        key = message.get("id")
        if key not in self._pending:
            return f"a response with id {json.dumps(key)}, which no request awaiting an answer had"
        method = self._pending.pop(key)
        if "result" not in message:
            return None
        if method == "initialize":
            self.negotiated = message["result"].get("protocolVersion")
            self.revision = revision_for(self.negotiated)
        if method in RESULTS and (why := _invalid(self.revision, RESULTS[method], message["result"])) is not None:
            return f"the result of {method} is not a {RESULTS[method]} of MCP {self.revision}: {why}"
        return None


def _invalid(revision: str, definition: str, instance: object) -> str | None:
    """Why instance is not a valid definition of revision, shortened, or None when it is."""
    error = jsonschema.exceptions.best_match(_validator(revision, definition).iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    text = f"{where or 'the message'}: {error.message}"
    return text if len(text) <= ERROR_CAP else text[: ERROR_CAP - 1] + "…"

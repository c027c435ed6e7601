"""S12: invalid requests, each with its own id, then a marker request: each gets an error response.

JSON-RPC 2.0 answers a request it cannot serve with an error carrying its id (id null where none can
be read: -32700 for a parse error). A server that drops an invalid request leaves a client waiting on
that id forever (python-sdk #2751, typescript-sdk #2247 and #563: the transport hands the validation
error to a log or an exception stream, never to the peer). S6a and S6b miss it: their ping, sent
afterwards, is answered.

The bug arm sends frames() one after another, then the era's liveness request (ping; server/discover in
2026-07-28) as the marker; the control sends each frame's valid twin (the liveness request with the
frame's id). The marker answered is not enough on its own: a server may answer out of order. An arm whose
every frame is answered once the marker is needs no wait, in either method: nothing later can take an answer back,
and waiting for the end of stdout would only turn a server that keeps it open into no verdict.
Otherwise what came back is final once the marker is answered and either the server is proven idle (hang's
read-side proof: every thread asleep with no timeout, one reading the empty stdin whose only writer
is the probe, so nothing but the probe's next line can make it write; fast method), or, where no
proof holds within the window (Node's libuv reads stdin in epoll, Go's runtime keeps a timed wait),
stdout has ended after the probe closed stdin.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

from stdio_probe.core import eras, sample, wire
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S12"
TITLE = "invalid requests, each with its id, then a marker: each gets an error"
ARMS = ("bug", "control")
FIRST_ID = 11
MARKER_ID = 30
DEPTH = 300  # levels of nested objects in the deep frame's params (pydantic's JSON parser stops at 255)
SENT_CAP = 120  # characters of a frame's bytes kept in the record
NULL_ID_CAP = 10  # answers with id null kept in the record
PARSE_ERROR = -32700
NO_ANSWER = "no answer"
ALL_ANSWERED = "all_answered"  # settled_by of an arm whose every frame was answered by the marker's answer
BATCH = "batch"


@dataclass(frozen=True)
class Frame:
    """One invalid request: its name, the id it carries (None: the parse-error frame, answered with id null),
    and its line. The control sends its valid twin in its place, with id twin_id."""

    name: str
    id: int | None
    twin_id: int
    line: bytes


def frames(era: str) -> list[Frame]:
    """The invalid requests, ids FIRST_ID on, each as the era would have it valid (its method the era's
    liveness one, its params the era's envelope), then made invalid in one way."""
    def valid(request_id: int, params: dict | None = None) -> dict:
        request = {"jsonrpc": "2.0", "id": request_id, "method": eras.liveness_method(era)}
        return eras.stamp(era, request | ({"params": params} if params else {}))

    def line(message: object) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    deep, bare, old, renamed, id_only, batch, parse = range(FIRST_ID, FIRST_ID + 7)
    nested: dict = {}
    for _ in range(DEPTH - 1):
        nested = {"a": nested}
    without = {key: value for key, value in valid(bare).items() if key != "jsonrpc"}
    method_ = {("method_" if key == "method" else key): value for key, value in valid(renamed).items()}
    return [
        Frame("deep", deep, deep, line(valid(deep, nested))),
        Frame("no jsonrpc", bare, bare, line(without)),
        Frame('jsonrpc "1.0"', old, old, line(valid(old) | {"jsonrpc": "1.0"})),
        Frame("method_", renamed, renamed, line(method_)),
        Frame("id only", id_only, id_only, line({"jsonrpc": "2.0", "id": id_only})),
        Frame(BATCH, batch, batch, line([valid(batch)])),
        Frame("not JSON", None, parse, b"{not json\n"),
    ]


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """After the opening, each frame (bug) or its valid twin (control) in its own write, then the marker;
    once it is answered, until what came back is final (settle)."""

    def body(s: session.Session) -> dict:
        sent = frames(s.era)
        lines = [frame.line if arm == "bug" else s.liveness_request(frame.twin_id) for frame in sent]
        for frame, line in zip(sent, lines, strict=True):
            if frame.id is not None:
                s.reader.expect(frame.id)  # a raw line: send does not know its id (a request's it does)
            if not s.send(line):
                return {"error": f"frame {frame.name!r} not sent: {s.write_blocked or 'stdin closed'}"}
        answered = s.send(s.liveness_request(MARKER_ID)) and s.reader.wait_answer(MARKER_ID, options.window)
        record: dict = {"marker": eras.answer_text(s.answer(MARKER_ID)), "marker_answered": answered}
        bug = arm == "bug"
        if answered and NO_ANSWER not in came_back(answers(sent, lines, s.reader, bug)):
            record["settled_by"] = ALL_ANSWERED  # nothing later can leave a frame unanswered: no wait
        elif answered:
            record.update(settle(s, options))
        return record | answers(sent, lines, s.reader, bug)

    return session.run(server, options, body)


def settle(s: session.Session, options: Options) -> dict:
    """Until the answers are final: the server proven idle (fast method; then stdout is read to its last
    byte and the reader stopped), else, the window over without proof, stdin closed and stdout ended (each window
    one of no progress of the server: Session.watch, wire.StdoutReader.wait_progressing).
    settled_by is "proof", "stdout_end", or None (stdout still open a window after EOF)."""
    stdout_fd = s.child.process.stdout.fileno()
    prove = s.idle_on_stdin if options.method == "fast" else None
    watched = s.watch(time.monotonic(), options.window, prove=prove)
    record = watched.record("marker", proof_threads=False)
    if watched.decided_by == "proof":  # nothing more will be written: read what is in the pipe, then stop
        drained = s.reader.wait_progressing(lambda r: not sample.pipe_fill(stdout_fd)["buffered"], options.window)
        record["settled_by"] = "proof" if s.reader.pause() and drained else None
        return record
    s.close_stdin()
    ended = s.reader.wait_progressing(lambda r: r.eof.is_set(), options.window)
    record["settled_by"] = "stdout_end" if ended else None
    return record


def answers(sent: list[Frame], lines: list[bytes | dict], reader: wire.StdoutReader, bug: bool) -> dict:
    """Each frame as sent (its bytes bounded), the answer to its id (by_id), and whether a server may be unable
    to read that id (the batch's lies inside an array, the parse error has none); every answer with id null."""
    null_ids = [m for m in reader.messages if "id" in m and m["id"] is None and "method" not in m]
    listed = []
    for frame, line in zip(sent, lines, strict=True):
        shown = line.decode("utf-8", "backslashreplace").rstrip("\n") if isinstance(line, bytes) else json.dumps(line)
        request_id = frame.id if bug else frame.twin_id
        readable = not bug or (frame.id is not None and frame.name != BATCH)
        answer = by_id(request_id, reader, array=not readable)
        fields = {"name": frame.name, "id": request_id, "sent": _cut(shown), "answer": answer}
        listed.append(fields | {"id_readable": readable})
    nulls = [{"code": _code(m), "answer": eras.answer_text(m)} for m in null_ids[:NULL_ID_CAP]]
    return {"frames": listed, "id_null": nulls}


def by_id(request_id: int | None, reader: wire.StdoutReader, array: bool) -> str:
    """The answer to request_id, in a few words; with array also an array answer naming it (a line the reader
    kept unparsed, cut to 200 characters)."""
    answer = None if request_id is None else reader.answers.get(request_id)
    if answer is not None or request_id is None or not array:
        return eras.answer_text(answer)
    named = re.compile(rf'^\[.*"id"\s*:\s*{request_id}\s*[,}}]')
    if any(named.search(str(m.get("unparsed", ""))) for m in reader.messages):
        return "an array answer naming its id"
    return NO_ANSWER


def _code(message: dict) -> int | None:
    error = message.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _cut(text: str) -> str:
    return text if len(text) <= SENT_CAP else f"{text[: SENT_CAP - 1]}… ({len(text)} characters)"


def came_back(record: dict) -> list[str]:
    """What answered each frame: the answer to its id; for a frame whose id a server may not read, else an
    error with id null: the parse error (no id) takes the last -32700, then the batch the first one left (a
    server that cannot parse an array says -32700, one that refuses batches -32600). An error with id null
    answers no frame whose id could be read: the client waiting on that id still waits."""
    left, final = list(record["id_null"]), [frame["answer"] for frame in record["frames"]]
    unread = [i for i, frame in enumerate(record["frames"]) if not frame["id_readable"] and final[i] == NO_ANSWER]
    for i in sorted(unread, key=lambda i: record["frames"][i]["id"] is not None):  # the parse error first
        no_id = record["frames"][i]["id"] is None
        fits = [null for null in left if not no_id or null["code"] == PARSE_ERROR]
        if fits:
            taken = fits[-1] if no_id else fits[0]
            left.remove(taken)
            final[i] = f"{taken['answer']} (id null)"
    return final


def assess(record: dict) -> Finding:
    """Shown when a frame got no answer (came_back) once what came back was final; no evidence while the marker
    went unanswered (S6a's defect, or a server gone) or nothing proved the answers final."""
    if not record["marker_answered"]:
        exited = f"exit {record['exit_code']}" if record.get("ended_by") == "self" else "alive"
        why = session.blocked_on_client(record) or exited
        return Finding(None, f"the marker went unanswered after the frames ({why})", "marker unanswered")
    if record["settled_by"] is None:
        note = "no proof the server was idle, and stdout still open a window after stdin EOF: the answers are not final"
        return Finding(None, note, "answers not final")
    how = {"proof": "proven idle", ALL_ANSWERED: "every frame answered"}.get(
        record["settled_by"], "stdout ended after stdin EOF"
    )
    names, answers = [frame["name"] for frame in record["frames"]], came_back(record)
    seen = "; ".join(f"{name}: {answer}" for name, answer in zip(names, answers, strict=True))
    if nulls := record["id_null"]:
        seen += f"; answers with id null: {', '.join(null['answer'] for null in nulls)}"
    missing = [name for name, answer in zip(names, answers, strict=True) if answer == NO_ANSWER]
    if missing:
        return Finding(True, f"{how}: {seen}", f"{len(missing)} of {len(names)} unanswered: {', '.join(missing)}")
    return Finding(False, f"{how}: {seen}", f"all {len(names)} answered")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

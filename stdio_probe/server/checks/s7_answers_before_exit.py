"""S7: requests written at once and stdin closed right after: every one is answered before stdout ends.

20 pings (server/discover in 2026-07-28, which has no ping) and a tools/list.

Stdin EOF ends the input, not the work already asked for (python-sdk #2678, go-sdk #1061,
rust-sdk #753): a server that exits on EOF with answers computed or in flight drops them, and
its host sees requests that never complete. Tried by hand, each Python SDK server answered 9-12
of these 21 and exited 0.

How many are still in flight at EOF is the server's scheduler's: a Rust server on rmcp 0.16 dropped some in 5
of 14 runs by hand, and a single run of the check missed it most of the time. So the trigger is tried again,
on a fresh server each time, until a trial shows a drop (session.RATE_TRIALS at most: Probe.trials).
"""

from __future__ import annotations

import json

from stdio_probe.core import eras
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S7"
TITLE = "requests then stdin EOF at once: all answered before stdout ends"
ARMS = ("bug",)
PINGS = 20
FIRST_ID = 100


def requests(s: session.Session) -> list[dict]:
    """PINGS liveness requests (ping; server/discover in 2026-07-28) and a tools/list, ids FIRST_ID on,
    each as the era requires it."""
    pings = [s.liveness_request(FIRST_ID + n) for n in range(PINGS)]
    listed = {"jsonrpc": "2.0", "id": FIRST_ID + PINGS, "method": "tools/list"}
    return [eras.stamp(s.era, m) for m in [*pings, listed]]


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """After the opening, every request in one write, stdin closed at once; until every request is answered (none
    can then be dropped: whether the server exits is S1's), stdout ends, or the window (of no progress:
    wire.StdoutReader.wait_progressing). A trial that shows no defect is so over as soon as the answers are in, and
    the trials (Probe.trials) stay cheap."""

    def body(s: session.Session) -> dict:
        sent = requests(s)
        ids = [m["id"] for m in sent]
        for message in sent:
            s.reader.expect(message["id"])
        accepted = s.send(b"".join(json.dumps(m).encode() + b"\n" for m in sent))
        s.close_stdin()
        s.reader.wait_progressing(lambda r: r.eof.is_set() or all(key in r.answers for key in ids), options.window)
        ended = s.reader.eof.is_set()
        return {
            "input_accepted": accepted,
            "sent": len(ids),
            "answered": sum(1 for key in ids if key in s.reader.answers),
            "unanswered": [key for key in ids if key not in s.reader.answers],
            "stdout_ended": ended,
        }

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when a request had no answer when stdout ended (or at the window's end)."""
    answered, sent = record["answered"], record["sent"]
    if answered == sent:
        return Finding(False, f"all {sent} requests answered before stdout ended", f"all {sent} answered")
    how = f"exit {record['exit_code']}" if record["stdout_ended"] else "stdout still open at the window"
    return Finding(
        True,
        f"{answered} of {sent} answered ({how}); unanswered ids {record['unanswered'][:5]}…",
        f"{answered} of {sent} answered, {how}",
    )


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess), trials=session.RATE_TRIALS)

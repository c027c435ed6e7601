"""H6: noise on stdout before the answer: the host still completes (or fails) the call and closes.

Trigger: before the answer, a non-JSON line, a line of invalid UTF-8, a response with no id, and a
response to an id never sent. Shown when the host hangs after the answer (proof, or the window) or is
ended by the probe. With the Python SDK the invalid UTF-8 line is L5: strict decoding ends the reader,
and the call waits for the server's stdout to end. Host rule: decode with errors="replace" and drop
lines that are not JSON-RPC (the mitigated arm of L5 in host_contract's terms).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.host import session

ID = "H6"
TITLE = "noise on stdout before the answer: the host still completes and closes"
ARMS = ("bug", "control")
SCENARIO = "noise"


def after_answer(record: dict, what: str) -> Finding:
    """H6, H7, H8 (the contract already asked of the host: session.judged): shown when the host hung after the
    answer was sent; else how it ended."""
    events = record["events"]
    if "stuck" in record:
        note = session.stuck_note(record["stuck"], "the answer")
        return Finding(True, f"{note} ({what})", note)
    answered = session.first(events, "answered")
    took = record["host_exit_t"] - answered["t"] if answered else None
    # the answering server's stdin: a host that starts a server per operation closed its list server's before
    eof = session.first(events, "stdin_eof", **({"launch": answered["launch"]} if answered else {}))
    eof = "stdin closed" if eof else "stdin never closed"
    when = f"{took:.2f} s after the answer" if took is not None else "before the answer"
    return Finding(False, f"host exited {record['host']['exit_code']} {when} ({what}; {eof})", f"host exited {when}")


def assess_bug(record: dict) -> Finding:
    return after_answer(record, "four bad lines before the answer")


PROBE = Probe(
    ID, TITLE, ARMS, session.shutdown_arm(SCENARIO), session.judged(assess_bug), slow_arms=session.HANG_ARMS
)

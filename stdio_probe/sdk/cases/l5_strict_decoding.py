"""L5: strict decoding withholds the fatal read error until the server's stdout ends.

stdio_client in mcp/client/stdio.py decodes the server's stdout through
TextReceiveStream(errors=server.encoding_error_handler), "strict" by default.
A byte that is not UTF-8 raises UnicodeDecodeError out of `async for chunk in
stdout`; the reader's finally then awaits _drain_stdout, which is shielded and
reads until EOF. Until the drain returns, the read stream stays open, so the
pending request neither gets its answer nor fails: only the end of the
server's stdout (closed, or the process exited) or the caller's own bound ends
it, and the decode error itself surfaces only when the transport exits.

The bug and control arms leave encoding_error_handler at the SDK's default
(a release whose default is "replace" has fixed this for its users). The
mitigated arm is the bug's exchange with the host's rule applied: it passes
encoding_error_handler="replace" in StdioServerParameters, so a bad
byte becomes U+FFFD in the answer instead of a fatal error.

The probe measures, for a server that (stay) stays alive with stdout open,
(close-stdout) closes stdout but stays alive, (exit) exits, how long after the
answer's bytes were written the caller's await ended, and with what. The
driver awaits each request with no timer of its own; one that has not ended
is pending forever, in the fast method, on proof (driver.blocked_test: the
driver and the arm's live servers blocked together, PROOF_SAMPLES readings in
a row, so no answer, error or EOF can come), and in either method once the
window has passed since the stay server wrote its answer. AFTER_DELAY is part
of the trigger, the same in both methods.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from pathlib import Path

from stdio_probe.core import spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.sdk.driver import ARM_MARKER, blocked_test, checkpoint, run_driver

ID = "L5"
TITLE = "strict decoding withholds the fatal read error until stdout ends"
DRIVER = "driver_decode.py"
NAMES = {"bug": b"bad-\xff-name", "control": b"good-name", "mitigated": b"bad-\xff-name"}
# encoding_error_handler: the bug and control arms leave it at the SDK's default (recorded in sdk_config,
# read from StdioServerParameters by the driver); the mitigated arm is the host choosing "replace"
ERRORS = {"bug": "default", "control": "default", "mitigated": "replace"}
CONDITIONS = ("stay", "close-stdout", "exit")
# answer written -> stdout closed / process exits, so "at the bad bytes" and "at EOF" differ (part of the trigger)
AFTER_DELAY = 1.0
STEP_SLACK = 15.0  # per condition: spawn, handshake, and the SDK's own shutdown escalation (about 4 s)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """The same tools/list exchange under the three server conditions; the answer's name is the arm's bytes."""
    arm_id = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="probe-l5-", dir=spawn.current().run_folder()) as folder:
        args = ["--name-hex", NAMES[arm].hex(), "--errors", ERRORS[arm], "--after-delay", str(AFTER_DELAY)]
        args += ["--events-dir", folder, "--arm-id", arm_id]

        def waited(since: float, last: str | None) -> float | None:  # since the stay server wrote its answer
            timeline = read_events(str(Path(folder) / "stay.events"))
            written = next((e["t"] for e in timeline if e["event"] == "raw_answer_written"), None)
            return None if written is None else time.monotonic() - written

        step = options.window + AFTER_DELAY + STEP_SLACK
        try:
            record = run_driver(sdk, args, options, DRIVER, step, stuck=blocked_test(options, arm_id, waited))
            if "stuck" in record:  # ended with requests pending: their timelines, as the servers logged them
                decided = record["stuck"]["t"]
                record["pending_requests"] = {
                    c: _pending_facts(Path(folder), c, decided) for c in CONDITIONS if checkpoint(record, c) is None
                }
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    return {
        "name_hex": NAMES[arm].hex(),
        "errors": ERRORS[arm],
        "after_delay_s": AFTER_DELAY,
        **record,
        "reaped_after_arm": reaped,
    }


def _pending_facts(folder: Path, condition: str, decided_t: float) -> dict:
    """A condition's facts for a driver ended before its checkpoint: the request as it ended (if it did, the
    driver stuck in the transport's exit) or pending, against the server's timeline."""
    timeline = read_events(str(folder / f"{condition}.events"))
    bad = next((e["t"] for e in timeline if e["event"] == "raw_answer_written"), None)
    try:
        request = json.loads((folder / f"{condition}.request").read_text())
    except (OSError, ValueError):
        request = {"outcome": "pending", "decided_after_answer_s": _since(decided_t, bad)}
    ended = request.pop("t", None)
    return {
        "condition": condition,
        "request": {**request, "after_answer_s": _since(ended, bad), "after_eof_s": None},
        "context_exit": None,
        "timeline": [{"event": e["event"], "after_answer_s": _since(e["t"], bad)} for e in timeline],
    }


def _since(t: float | None, origin: float | None) -> float | None:
    return None if t is None or origin is None else round(t - origin, 3)


def condition_facts(record: dict) -> dict[str, dict | None]:
    """Each condition's facts: its checkpoint's, or, for a driver ended first, what the probe read (pending)."""
    pending = record.get("pending_requests", {})
    return {c: (checkpoint(record, c) or {}).get("facts") or pending.get(c) for c in CONDITIONS}


def assess(record: dict) -> Finding:
    """Shown when, with the server alive and its stdout open, the request was proven pending forever or was still
    pending a window after the bad answer."""
    facts = condition_facts(record)
    if any(f is None for f in facts.values()):
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    if not all(any(e["event"] == "raw_answer_written" for e in f["timeline"]) for f in facts.values()):
        return Finding(None, "fixture timeline incomplete (the bad answer was not logged)", "bad answer not logged")
    if "stuck" in record:
        stuck = record["stuck"]
        proven = stuck["decided_by"] == "proof"
        pending = "proven pending forever" if proven else "pending a window after the answer"
        how = "proven pending" if proven else "pending a window"  # the headline's words (BRIEF_CHARS)
    elif "hold_s" in record:  # a record made before the probe decided (its driver bounded the await itself)
        how, pending = f"pending past {record['hold_s']:g} s", f"no outcome within {record['hold_s']:g} s"
    else:  # the driver came back: no request is pending
        how = pending = "pending"
    note = "; ".join(f"{c}: {_describe(f, pending)}" for c, f in facts.items())
    stay = facts["stay"]["request"]
    if stay["outcome"] == "pending":
        short = f"request {how}, server alive"
    else:
        short = f"request ended ({stay['outcome']}), server alive"
    return Finding(stay["outcome"] == "pending", note, short)


def _describe(facts: dict, pending: str) -> str:
    request, left = facts["request"], facts["context_exit"]
    if request["outcome"] == "pending":
        text = pending
        if request.get("decided_after_answer_s") is not None:
            text += f" {request['decided_after_answer_s']:.2f} s after the answer"
    else:
        text = request.get("error") or f"{request['outcome']} {request.get('tools', '')}".strip()
        if request["after_answer_s"] is not None:
            text += f" after {request['after_answer_s']:.2f} s"
        if request["after_eof_s"] is not None:
            gap = request["after_eof_s"]
            text += f" ({abs(gap):.2f} s {'after' if gap >= 0 else 'before'} stdout EOF)"
    if left is None:
        text += ", the driver ended before leaving the transport"
    elif left["leaves"]:
        classes = sorted({leaf.split(":")[0] for leaf in left["leaves"]})
        text += f", transport exit raised {'+'.join(classes)} at {left['after_answer_s']:.2f} s"
    return text


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

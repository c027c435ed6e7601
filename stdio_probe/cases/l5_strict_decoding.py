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
answer's bytes were written the caller's await ended, and with what.
"""

from __future__ import annotations

from stdio_probe.driver import checkpoint, run_driver
from stdio_probe.model import CASE_ARMS, Finding, Options, Probe, Sdk

ID = "L5"
TITLE = "strict decoding withholds the fatal read error until stdout ends"
DRIVER = "driver_decode.py"
NAMES = {"bug": b"bad-\xff-name", "control": b"good-name", "mitigated": b"bad-\xff-name"}
# encoding_error_handler: the bug and control arms leave it at the SDK's default (recorded in sdk_config,
# read from StdioServerParameters by the driver); the mitigated arm is the host choosing "replace"
ERRORS = {"bug": "default", "control": "default", "mitigated": "replace"}
CONDITIONS = ("stay", "close-stdout", "exit")
HOLD = 2.0  # the caller's own bound on the request, fast method (window method: the whole window)
AFTER_DELAY = 1.0  # answer written -> stdout closed / process exits, so "at the bad bytes" and "at EOF" differ
STEP_SLACK = 15.0  # per condition: spawn, handshake, and the SDK's own shutdown escalation (about 4 s)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """The same tools/list exchange under the three server conditions; the answer's name is the arm's bytes."""
    hold = HOLD if options.method == "fast" else options.window
    args = ["--name-hex", NAMES[arm].hex(), "--errors", ERRORS[arm]]
    args += ["--hold", str(hold), "--after-delay", str(AFTER_DELAY)]
    record = run_driver(sdk, args, options, script=DRIVER, step_timeout=hold + AFTER_DELAY + STEP_SLACK)
    return {"name_hex": NAMES[arm].hex(), "errors": ERRORS[arm], "hold_s": hold, "after_delay_s": AFTER_DELAY, **record}


def assess(record: dict) -> Finding:
    """Shown when, with the server alive and its stdout open, the request was still pending at the caller's bound."""
    facts = {c: (checkpoint(record, c) or {}).get("facts") for c in CONDITIONS}
    if any(f is None for f in facts.values()):
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    if not all(any(e["event"] == "raw_answer_written" for e in f["timeline"]) for f in facts.values()):
        return Finding(None, "fixture timeline incomplete (the bad answer was not logged)", "bad answer not logged")
    note = "; ".join(f"{c}: {_describe(f, record['hold_s'])}" for c, f in facts.items())
    stay = facts["stay"]["request"]
    if stay["outcome"] == "pending":
        short = f"request pending past {record['hold_s']:g} s, server alive"
    else:
        short = f"request ended ({stay['outcome']}), server alive"
    return Finding(stay["outcome"] == "pending", note, short)


def _describe(facts: dict, hold: float) -> str:
    request, left = facts["request"], facts["context_exit"]
    if request["outcome"] == "pending":
        text = f"no outcome within {hold:g} s"
    else:
        text = request.get("error") or f"{request['outcome']} {request.get('tools', '')}".strip()
        if request["after_answer_s"] is not None:
            text += f" after {request['after_answer_s']:.2f} s"
        if request["after_eof_s"] is not None:
            gap = request["after_eof_s"]
            text += f" ({abs(gap):.2f} s {'after' if gap >= 0 else 'before'} stdout EOF)"
    if left["leaves"]:
        classes = sorted({leaf.split(":")[0] for leaf in left["leaves"]})
        text += f", transport exit raised {'+'.join(classes)} at {left['after_answer_s']:.2f} s"
    return text


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

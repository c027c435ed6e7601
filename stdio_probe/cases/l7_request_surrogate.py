"""L7: a lone surrogate in a request's arguments kills the client's writer and the whole session.

stdio_client's stdin_writer in mcp/client/stdio.py serialises each outbound
message with model_dump_json(); for a str holding a lone surrogate (what
os.fsdecode() makes of a non-UTF-8 filename) that raises
PydanticSerializationError before anything is encoded, so
encoding_error_handler cannot help, and the writer catches only
ClosedResourceError, BrokenResourceError and OSError. The writer task dies,
the transport's task group cancels everything in it: the caller's await is
cancelled (CancelledError, not an error for that one request), no later
request can be sent on the session, and leaving stdio_client raises an
ExceptionGroup. This is the client half of python-sdk #3707 (L2 is the
server half).

The mitigated arm makes the bug arm's call with the arguments passed through
host_contract.sanitize_outbound first.
"""

from __future__ import annotations

from stdio_probe.driver import checkpoint, run_driver
from stdio_probe.model import CASE_ARMS, Finding, Options, Probe, Sdk

ID = "L7"
TITLE = "lone surrogate in a request kills the client writer and the session"
DRIVER = "driver_surrogate.py"
# os.fsdecode of these bytes is the text sent: "bad-\udcff-name" (a lone surrogate), "a\ufffdb" (valid)
NAMES = {"bug": b"bad-\xff-name", "control": "a\ufffdb".encode(), "mitigated": b"bad-\xff-name"}
HOLD = 2.0  # the caller's own bound on each call, fast method (window method: the whole window)
STEP_SLACK = 10.0  # spawn, handshake and the SDK's shutdown, beyond the two calls' bounds


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """Two echo calls on one session: the arm's text, then a plain one."""
    hold = HOLD if options.method == "fast" else options.window
    args = ["--name-hex", NAMES[arm].hex(), "--hold", str(hold), *(["--sanitize"] if arm == "mitigated" else [])]
    record = run_driver(sdk, args, options, script=DRIVER, step_timeout=2 * hold + STEP_SLACK)
    return {"name_hex": NAMES[arm].hex(), "hold_s": hold, **record}


def assess(record: dict) -> Finding:
    """Shown when the session died: the plain call after the arm's call got no result."""
    calls = checkpoint(record, "calls")
    if calls is None:
        return Finding(None, "driver did not reach its checkpoints")
    facts = calls["facts"]
    if facts["first"]["outcome"] == "not sent":
        return Finding(None, f"the session never got to the call ({facts['context_exit']['error']})")
    note = f"call with {facts['text']}: {_describe(facts['first'])}; second call: {_describe(facts['second'])}"
    left = facts["context_exit"]
    if left["leaves"]:
        classes = "+".join(sorted({leaf.split(":")[0] for leaf in left["leaves"]}))
        note += f"; transport exit raised {classes} at {left['after_s']:.2f} s"
    died = facts["second"]["outcome"] != "result"
    return Finding(died, note, "session died, second call lost" if died else "one call failed, session lived")


def _describe(call: dict) -> str:
    outcome = call["outcome"]
    if outcome == "result":
        text = f"result {ascii(call['text'])}"
    elif outcome in ("error", "cancelled"):
        text = f"{outcome} ({call['error'].split(':')[0]})"
    else:
        text = outcome
    return text + (f" at {call['after_s']:.2f} s" if "after_s" in call else "")


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

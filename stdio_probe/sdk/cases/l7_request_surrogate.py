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

The driver makes the second call once the first is under way, and awaits
both with no timer of its own. A call that has not ended is pending forever,
in the fast method, on proof (driver.blocked_test: the driver and the arm's
live server blocked together, PROOF_SAMPLES readings in a row, so no answer
or error can come), and in either method once the window has passed since
the driver's last checkpoint (the calls' start, or the other call's end).
"""

from __future__ import annotations

import os
import uuid

from stdio_probe.core import spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.sdk.driver import ARM_MARKER, blocked_test, checkpoint, run_driver

ID = "L7"
TITLE = "lone surrogate in a request kills the client writer and the session"
DRIVER = "driver_surrogate.py"
# os.fsdecode of these bytes is the text sent: "bad-\udcff-name" (a lone surrogate), "a\ufffdb" (valid)
NAMES = {"bug": b"bad-\xff-name", "control": "a\ufffdb".encode(), "mitigated": b"bad-\xff-name"}
STEP_SLACK = 10.0  # spawn, handshake and the SDK's shutdown, beyond the calls' window
SLOTS = ("first", "second")


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """Two echo calls on one session: the arm's text, then a plain one."""
    arm_id = uuid.uuid4().hex
    args = ["--name-hex", NAMES[arm].hex(), "--arm-id", arm_id, *(["--sanitize"] if arm == "mitigated" else [])]

    def waited(since: float, last: str | None) -> float | None:  # since the calls' start, or a call's end
        return since if last in ("calling", *SLOTS) else None

    try:
        record = run_driver(
            sdk, args, options, DRIVER, options.window + STEP_SLACK, stuck=blocked_test(options, arm_id, waited)
        )
    finally:
        reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    return {"name_hex": NAMES[arm].hex(), **record, "reaped_after_arm": reaped}


def call_facts(record: dict) -> dict | None:
    """The driver's "calls" checkpoint facts, or, for a driver ended with a call pending, each call's own
    checkpoint (a call without one pending) and no transport exit."""
    if (calls := checkpoint(record, "calls")) is not None:
        return calls["facts"]
    if "stuck" not in record or checkpoint(record, "calling") is None:
        return None
    ended = {slot: checkpoint(record, slot) for slot in SLOTS}
    facts = {slot: point["facts"] if point else {"outcome": "pending"} for slot, point in ended.items()}
    return {"text": ascii(os.fsdecode(bytes.fromhex(record["name_hex"]))), **facts, "context_exit": None}


def assess(record: dict) -> Finding:
    """Shown when the session died: the plain call beside the arm's call got no result."""
    facts = call_facts(record)
    if facts is None:
        return Finding(None, "driver did not reach its checkpoints")
    if facts["first"]["outcome"] == "not sent":
        return Finding(None, f"the session never got to the call ({facts['context_exit']['error']})")
    how = None
    if "stuck" in record:
        how = "proven pending forever" if record["stuck"]["decided_by"] == "proof" else "pending a window on"
    note = f"call with {facts['text']}: {_describe(facts['first'], how)}"
    note += f"; second call: {_describe(facts['second'], how)}"
    if facts.get("second_waited_for") == "the bound":
        note += " (started after the 1 s bound, a task of the SDK never blocked)"
    left = facts["context_exit"]
    if left is None:
        note += "; the driver was ended before leaving the transport"
    elif left["leaves"]:
        classes = "+".join(sorted({leaf.split(":")[0] for leaf in left["leaves"]}))
        note += f"; transport exit raised {classes} at {left['after_s']:.2f} s"
    died = facts["second"]["outcome"] != "result"
    return Finding(died, note, "session died, second call lost" if died else "one call failed, session lived")


def _describe(call: dict, how: str | None) -> str:
    outcome = call["outcome"]
    if outcome == "pending":  # how it was decided; a record made before the probe decided has none
        text = how or outcome
    elif outcome == "result":
        text = f"result {ascii(call['text'])}"
    elif outcome in ("error", "cancelled"):
        text = f"{outcome} ({call['error'].split(':')[0]})"
    else:
        text = outcome
    return text + (f" at {call['after_s']:.2f} s" if "after_s" in call else "")


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

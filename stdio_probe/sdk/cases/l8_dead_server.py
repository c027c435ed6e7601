"""L8: a request hangs forever when the server has died but a descendant still holds its stdout.

stdio_client in mcp/client/stdio.py ends the session's read stream only when
stdout_reader reaches EOF on the server's stdout, and nothing watches the
server process while the session runs: only shutdown polls its returncode.
A server started behind a shell with a background job (sh -c 'sleep N & exec
server') shares its stdout pipe with that job; when the server dies, the
event loop reaps it, but the pipe's write end is still open in the job, so no
EOF comes, and a request in flight neither gets an answer nor fails until the
job ends or the caller's own bound runs out. Related: python-sdk #332 (the
plain-EOF case, closed).

The driver awaits the call with no timer of its own. Once the server's pid
has exited (the driver writes who then holds its stdout's write end), the
call is pending forever, in the fast method, on proof
(hang.prove_blocked_together, PROOF_SAMPLES readings in a row): the driver
and every holder of that write end sleep with no timeout, and nothing
outside the two (no child, pending signal, timer, or other live process of
their trees) can wake either; the holder is a background job that waits
for a signal. Otherwise, and in the window method, the call is pending when
it has not ended within the window after the exit.

The mitigated arm wraps the call in host_contract.fail_when_exits, watching
the pid that host_contract.spawned_server finds among the host's children.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from pathlib import Path

from stdio_probe.core import hang, sample, spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.sdk.driver import StuckTest, checkpoint, run_driver, stuck_test

ID = "L8"
TITLE = "request hangs when the dead server's stdout is held by a descendant"
DRIVER = "driver_dead_server.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server, inherited by its job
STEP_SLACK = 10.0  # beyond the window: spawn, handshake and the SDK's shutdown


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """The exit call: behind a shell with a background job (bug, mitigated) or without (control)."""
    arm_id = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="probe-l8-", dir=spawn.current().run_folder()) as folder:
        events, seen = str(Path(folder) / "server.events"), Path(folder) / "seen.json"
        args = ["--events", events, "--seen", str(seen), "--arm-id", arm_id]
        args += (["--holder"] if arm != "control" else []) + (["--contract"] if arm == "mitigated" else [])
        try:
            stuck = _pending_test(options, seen, arm_id)
            record = run_driver(sdk, args, options, DRIVER, options.window + STEP_SLACK, stuck=stuck)
            if "stuck" in record:  # the driver was ended with its call pending: what it saw, as its checkpoint has it
                record["pending_call"] = _pending_facts(
                    json.loads(seen.read_text()), read_events(events), record["stuck"]["t"]
                )
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    return {"holder": arm != "control", **record, "reaped_after_arm": reaped}


def _pending_test(options: Options, seen: Path, arm_id: str) -> StuckTest:
    """driver.stuck_test, pending from the moment the driver saw the server gone; the proof: the driver and the
    holders of the server's stdout are blocked together (hang.prove_blocked_together)."""
    facts: dict = {}

    def pending_s(since: float, last: str | None) -> float | None:
        try:
            facts.update(json.loads(seen.read_text()))
        except (OSError, ValueError):  # not seen yet (or being written)
            return None
        return time.monotonic() - facts["exit_seen_t"]

    def prove(pid: int, marker: tuple[str, str]) -> dict:
        writers = sample.pipe_writers(facts["inode"])
        if not writers:
            return {"proven": False, "why_not": "no process holds the server's stdout"}
        return hang.prove_blocked_together({pid: marker, **{holder: (ARM_MARKER, arm_id) for holder in writers}})

    return stuck_test(options, pending_s, prove)


def _pending_facts(seen: dict, events: list[dict], decided_t: float) -> dict:
    """The call checkpoint's facts for a driver ended with its call pending: the server as it logged its exit,
    when the driver saw it gone, who held its stdout then and who still does."""
    exit_event = next((e for e in events if e["event"] == "exit"), None)
    origin = exit_event["t"] if exit_event else None
    return {
        "server": {
            "stdout_inode": seen["inode"],
            "exit_logged": exit_event is not None,
            "exit_code_logged": exit_event["code"] if exit_event else None,
            "exit_seen_after_s": None if origin is None else round(seen["exit_seen_t"] - origin, 3),
        },
        "holders": seen["holders"],
        "holders_alive_at_end": [h["pid"] for h in seen["holders"] if sample.is_live(h["pid"])],
        "call": {
            "outcome": "pending",
            "after_exit_s": None,
            "decided_after_seen_s": round(decided_t - seen["exit_seen_t"], 3),
        },
    }


def call_facts(record: dict) -> dict | None:
    """The driver's "call" checkpoint facts, or those of a call it was ended on (pending_call)."""
    point = checkpoint(record, "call")
    return point["facts"] if point is not None else record.get("pending_call")


def eof_not_handled(record: dict) -> str | None:
    """The control's premise fails: the server died, no process held its stdout (so EOF came), and the call
    still pended. Such an SDK fails no pending request at its server's stdout EOF (python-sdk #332, the
    plain-EOF case), so there is no EOF handling for a held stdout to defeat: the case does not apply."""
    facts = call_facts(record)
    if facts is None:
        return None
    if facts["server"]["exit_seen_after_s"] is None or facts["holders"] or facts["call"]["outcome"] != "pending":
        return None
    how = "proven pending" if record["stuck"]["decided_by"] == "proof" else "pending at the window's end"
    return (
        f"this SDK fails no pending request at its server's stdout EOF (control: the server exited, no process "
        f"held its stdout, the call {how}; python-sdk #332)"
    )


def assess(record: dict) -> Finding:
    """Shown when the call was proven pending forever after the server's exit, or still pending a window later."""
    facts = call_facts(record)
    if facts is None:
        return Finding(None, "driver did not reach its checkpoints")
    server, call = facts["server"], facts["call"]
    if not server["exit_logged"]:
        return Finding(None, "the server never exited")
    note = f"server exited {server['exit_code_logged']}"
    if server["exit_seen_after_s"] is None:  # the call ended before the watch saw the pid gone
        note += ", the call ended before its pid was seen gone"
    else:
        note += f", seen gone {server['exit_seen_after_s']:.2f} s later"
        holders = [f"{h['pid']} ({h['cmdline'] or '?'})" for h in facts["holders"]]
        note += f"; its stdout's write end held by {', '.join(holders)}" if holders else "; no one held its stdout"
    if call["outcome"] == "pending":
        stuck = record["stuck"]
        how = "proven pending forever" if stuck["decided_by"] == "proof" else "pending a window after the exit"
        note += f"; call {how} {call['decided_after_seen_s']:.2f} s after its exit was seen"
        alive = facts["holders_alive_at_end"]
        note += f", holder{'s' if len(alive) > 1 else ''} {alive} still alive" if alive else ""
    else:
        what = call.get("error") or call["outcome"]
        note += f"; call ended {what} {call['after_exit_s']:.2f} s after the exit"
    pending = call["outcome"] == "pending"
    return Finding(pending, note, "call pending after server died" if pending else "call ended after server died")


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess, needs={"control": eof_not_handled})

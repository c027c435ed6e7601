"""L9: the descendants of a server that exits by itself outlive it.

stdio_client's shutdown in mcp/client/stdio.py (_stop_server_process) closes
the server's stdin, waits PROCESS_TERMINATION_TIMEOUT (2 s) for it to exit,
and only if it is still alive then runs _terminate_process_tree: SIGTERM,
then SIGKILL, to the server's process group (stdio_client starts the server
in a session of its own). A server that exits promptly at stdin EOF, as
servers should, skips the group kill, and whatever it started in its group
lives on, re-parented. The SDK calls this deliberate (docs/migration.md);
python-sdk #3457 asks for a process-group hook.

Bug: the fixture server starts a background `sleep` and exits by itself at
stdin EOF. Control: the same server with its descendant, ignoring stdin EOF,
so the SDK's escalation (the group kill) runs: it shows that the probe's
watch sees a killed descendant as gone, and that what the bug arm shows
comes from the skipped escalation, not from the descendant as such. A
control without a descendant could not show anything. Mitigated: the bug's
trigger, the transport entered through host_contract.end_server_group.

Decided once the context has exited, when the driver waits, with no
timeout, for the arm's processes (found by the arm marker) to end: shown
when one is still live the window later, or, in the fast method, on proof
(hang.prove_blocked_together, PROOF_SAMPLES readings in a row) that nothing
will end the descendant before its own end (DESCENDANT_MARGIN beyond every
bound): the driver and every other process of the arm sleep for good, with
no outside wake source (no child, pending signal, timer, or live process of
their trees), and the descendant has no signal pending. The probe then
reaps what is left by the marker.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from pathlib import Path

from stdio_probe.core import hang, sample, spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk, parent_of
from stdio_probe.sdk.driver import StuckTest, checkpoint, run_driver, stuck_test

ID = "L9"
TITLE = "a server that exits by itself leaves its descendants running"
DRIVER = "driver_descendants.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server, inherited by its descendant
SLOW_ARMS = ("control",)  # waits out the SDK's 2 s grace before its group kill: queued first
LINGER_BOUND = 6.0  # the control's server ignores stdin EOF this long (above the SDK's 2 s grace), then exits
STEP_SLACK = 10.0  # spawn, handshake and the SDK's shutdown
DESCENDANT_MARGIN = 20.0  # the descendant outlives the arm's bound by this much; the probe reaps it after


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """A server with a background descendant that exits at EOF (bug, mitigated) or ignores it (control)."""
    arm_id = uuid.uuid4().hex
    step_timeout = LINGER_BOUND + options.window + STEP_SLACK
    descendant_s = step_timeout + DESCENDANT_MARGIN
    with tempfile.TemporaryDirectory(prefix="probe-l9-", dir=spawn.current().run_folder()) as folder:
        seen = Path(folder) / "seen.json"
        args = ["--descendant-s", str(descendant_s), "--linger-bound", str(LINGER_BOUND), "--seen", str(seen)]
        args += ["--events", str(Path(folder) / "server.events"), "--arm-id", arm_id]
        args += {"control": ["--linger"], "mitigated": ["--contract"]}.get(arm, [])
        try:
            stuck = _left_test(options, seen, arm_id)
            record = run_driver(sdk, args, options, script=DRIVER, step_timeout=step_timeout, stuck=stuck)
            if "stuck" in record:  # the driver was ended with the arm's processes live: what it left, and them
                record["left_for_good"] = _left_facts(json.loads(seen.read_text()), arm_id, record["stuck"]["t"])
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    return {"descendant_s": descendant_s, **record, "reaped_after_arm": reaped}


def _left_test(options: Options, seen: Path, arm_id: str) -> StuckTest:
    """driver.stuck_test, pending from the moment the context exited; the proof: the driver and the arm's other
    processes are blocked together and nothing else will end the descendant (hang.prove_blocked_together, the
    descendant accounted for, with no signal pending)."""
    left: dict = {}

    def pending_s(since: float, last: str | None) -> float | None:
        try:
            left.update(json.loads(seen.read_text()))
        except (OSError, ValueError):  # the context has not exited yet (or the file is being written)
            return None
        return time.monotonic() - left["left_t"]

    def prove(pid: int, marker: tuple[str, str]) -> dict:
        descendant, live = left["descendant"], [p["pid"] for p in sample.marked_processes(ARM_MARKER, arm_id)]
        members = {pid: marker, **{other: (ARM_MARKER, arm_id) for other in live if other != descendant}}
        pending = sample.pending_signals(descendant) if descendant in live else None
        if pending is None:
            return {"proven": False, "why_not": "the descendant is gone"}
        if any(int(mask, 16) for mask in pending.values()):
            return {"proven": False, "why_not": "a signal is pending for the descendant"}
        return hang.prove_blocked_together(members, accounted=[descendant])

    return stuck_test(options, pending_s, prove)


def _left_facts(left: dict, arm_id: str, decided_t: float) -> dict:
    """The "left" checkpoint's facts for a driver ended while the arm's processes lived: as the driver saw
    them when the context exited, and the survivors at the decision."""
    found = sample.marked_processes(ARM_MARKER, arm_id)
    alive = [{**p, "ppid": sample.parent_pid(p["pid"]), "pending": sample.pending_signals(p["pid"])} for p in found]
    survivors = [{**p, "adopted": p["ppid"] == os.getpid()} for p in alive]
    facts = {key: value for key, value in left.items() if key != "left_t"}
    return {**facts, "watch_s": round(decided_t - left["left_t"], 3), "gone_after_s": None, "survivors": survivors}


def left_facts(record: dict) -> dict | None:
    """The driver's "left" checkpoint facts, or those of a driver ended while the arm's processes lived."""
    point = checkpoint(record, "left")
    return point["facts"] if point is not None else record.get("left_for_good")


def no_group_kill(record: dict) -> str | None:
    """The control's premise fails: the server ignoring stdin EOF met the SDK's escalation, or none, and its
    descendant survived. Such an SDK has no group kill: mcp 1.0.0 signals nothing and waits for the server;
    1.6.0 to 1.10.x SIGTERM the server process alone. There is no group kill for a prompt exit to skip, so
    the case does not apply."""
    facts = left_facts(record)
    if facts is None or assess(record).shown is not True:
        return None
    if signals := facts["server"]["signals"]:
        return (
            f"this SDK's shutdown signals the server but not its group (control: the server got "
            f"{', '.join(signals)} and its descendant lived on): there is no group kill for a prompt exit to skip"
        )
    return (
        f"this SDK signals no server that ignores stdin EOF (control: no signal in its {LINGER_BOUND:g} s linger, "
        "it exited by itself and its descendant lived on): there is no group kill for a prompt exit to skip"
    )


def assess(record: dict) -> Finding:
    """Shown when a process of the arm's tree was proven left for good, or still live the window after
    stdio_client's context exited."""
    facts = left_facts(record)
    if facts is None:
        return Finding(None, "driver did not reach its checkpoints")
    server = facts["server"]
    if server["pid"] is None or facts["descendant"] is None:
        return Finding(None, "the server never started its descendant")
    if server["signals"]:
        note = f"server got {', '.join(server['signals'])}"
    else:
        note = "server exited by itself" if server["stdin_eof_logged"] else "server exited before stdin EOF"
    if facts["left_after_eof_s"] is not None:
        note += f"; context exited {facts['left_after_eof_s']:.2f} s after its EOF"
    if facts["gone_after_s"] is not None:
        note += f"; no process of its tree live {facts['gone_after_s']:.2f} s later"
        return Finding(False, note, "descendant ended with the server")
    left = [f"{p['pid']} ({p['cmdline'] or '?'}, {parent_of(p)})" for p in facts["survivors"]]
    how = "proven left for good" if record["stuck"]["decided_by"] == "proof" else "still live"
    note += f"; {facts['watch_s']:g} s later {how}: {', '.join(left)}"
    return Finding(True, note, "descendant outlives the exited server")


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess, slow_arms=SLOW_ARMS, needs={"control": no_group_kill})

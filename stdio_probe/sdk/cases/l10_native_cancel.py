"""L10: a native asyncio cancel during stdio_client's shutdown hangs the host forever and never signals the server.

stdio_client's finally in mcp/client/stdio.py runs shutdown() inside
anyio.CancelScope(shield=True): close stdin, wait PROCESS_TERMINATION_TIMEOUT
(2 s) for the server to exit, then SIGTERM and SIGKILL to its group. An anyio
cancellation respects the shield; a native one does not: asyncio.timeout()
and task.cancel() throw CancelledError into the task at whatever it awaits,
here the shielded poll of _wait_for_process_exit, so shutdown() stops before
any signal is sent. The task group then cancels its tasks and waits for them;
stdout_reader is in _drain_stdout, also shielded, which reads until stdout
EOF, and a server that ignores stdin EOF never closes its stdout. The host
task waits in `async with stdio_client(...)`'s exit for as long as the server
lives, with no timer of its own, and nothing signals the server. The SDK's
comment next to the shield says so: "Native task.cancel() ... can still
defeat it".

Bug: asyncio.timeout around a connection whose body takes 0.4 s after
initialize, firing 0.7 s after initialize: 0.3 s into the shutdown's grace
period. Control: it fires 0.2 s after initialize, inside the body, before
shutdown starts. Mitigated: the bug's timeout, with the connection run
through host_contract.run_connection. (Measured from initialize, not from
the connect, so a slow start cannot move it.)

A host that does not come back is called stuck, in the fast method, on
proof: in PROOF_SAMPLES consecutive samples every thread of the driver sleeps
in a wait with no timeout and nothing but its server can wake it
(hang.prove_waiting_forever: every fd its event loop watches ruled out by
the wake-source rule, an armed timerfd never; no child but the server's
tree, no pending signal or timer, no other live process of the driver's
tree); the server
ignores stdin EOF for LINGER_BOUND s, beyond any window. Without a proof, and
in the window method, the host gets the whole window after the server's stdin
EOF (the start of shutdown). The probe then ends the driver, records whether the server is
alive and who its parent is, and reaps it by the arm's marker.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

from stdio_probe.core import hang, sample, spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.sdk.driver import StuckTest, checkpoint, run_driver, stuck_test

ID = "L10"
TITLE = "native cancel in stdio_client shutdown hangs the host, server unsignalled"
DRIVER = "driver_cancel.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server
FIRE_AFTER = {"bug": 0.7, "control": 0.2, "mitigated": 0.7}  # when asyncio.timeout fires, s after initialize
BODY = 0.4  # seconds the connection's body sleeps after initialize
SLOW_ARMS = ("control", "mitigated")  # they wait out the SDK's 2 s grace before its SIGTERM: queued first
LINGER_BOUND = 60.0  # the server ignores stdin EOF for this long, then exits by itself (if nothing reaped it)
STEP_TIMEOUT = 15.0  # no-progress bound per checkpoint: above the SDK's whole shutdown escalation (about 6 s)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    fire_after, arm_id = FIRE_AFTER[arm], uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="probe-l10-", dir=spawn.current().run_folder()) as folder:
        events = str(Path(folder) / "server.events")
        args = ["--fire-after", str(fire_after), "--body", str(BODY), "--linger-bound", str(LINGER_BOUND)]
        args += ["--events", events, "--arm-id", arm_id, *(["--contract"] if arm == "mitigated" else [])]
        try:
            stuck = _stuck_test(options, events, arm_id)
            record = run_driver(sdk, args, options, DRIVER, STEP_TIMEOUT, stuck=stuck)
            server = _server_after_host(read_events(events))
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    return {"fire_after_s": fire_after, "body_s": BODY, **record, "server": server, "reaped_after_arm": reaped}


def cancel_not_survived(record: dict) -> str | None:
    """The control's premise fails: the native cancel fired inside the body, before shutdown, and still the host
    never came back. Such an SDK's host does not survive a native cancel anywhere (mcp 1.0's stdio_client has no
    shielded shutdown to defeat): the case does not apply. Whether the server logged a signal is not part of it:
    on such an SDK the server shares the driver's process group, and the signal it logs is the probe's own SIGTERM
    to that group when it ends the stuck driver, logged or not by the time the events are read."""
    stuck, server = record.get("stuck"), record["server"]
    if stuck is None or stuck["after_checkpoint"] != "started":
        return None
    return (
        f"this SDK's host does not survive a native cancel even inside the session (control: the timeout fired "
        f"{record['fire_after_s']:g} s after initialize, the server got {', '.join(server['signals']) or 'no signal'}"
        f", the host stuck in stdio_client's exit): no shielded shutdown for the cancel to defeat"
    )


def _stuck_test(options: Options, events: str, arm_id: str) -> StuckTest:
    """driver.stuck_test, pending from the server's stdin EOF (the start of shutdown); the proof: nothing but its
    server (the arm's marked tree) can wake the driver (hang.prove_waiting_forever)."""

    def pending_s(since: float, last: str | None) -> float | None:
        eof = next((e["t"] for e in read_events(events) if e["event"] == "stdin_eof"), None)
        return None if eof is None else time.monotonic() - eof

    def prove(pid: int, marker: tuple[str, str]) -> dict:
        server = [p["pid"] for p in sample.marked_processes(ARM_MARKER, arm_id)]
        return hang.prove_waiting_forever(pid, marker, accounted=server)

    return stuck_test(options, pending_s, prove)


def _server_after_host(events: list[dict]) -> dict:
    """The server as the host left it: its pid, the signals it logged, and (once the host ended) alive, parent."""
    start = next((e for e in events if e["event"] == "start"), None)
    if start is None:
        return {"pid": None}
    pid = start["pid"]
    return {
        "pid": pid,
        "ppid_at_start": start["ppid"],
        "signals": [e["name"] for e in events if e["event"] == "signal"],
        "stdin_eof_t": next((e["t"] for e in events if e["event"] == "stdin_eof"), None),
        "alive_after_host": sample.is_live(pid),
        "ppid_after_host": sample.parent_pid(pid) if sample.is_live(pid) else None,
    }


def assess(record: dict) -> Finding:
    """Shown when the host never came back from stdio_client's exit, or came back leaving the server alive."""
    server, stuck, returned = record["server"], record.get("stuck"), checkpoint(record, "returned")
    if checkpoint(record, "started") is None or server["pid"] is None:
        return Finding(None, "the host never started its server")
    if stuck is not None and stuck["after_checkpoint"] != "started":
        return Finding(None, f"driver stuck after {stuck['after_checkpoint']}, not in the connection")
    signals = ", ".join(server["signals"]) or "no signal"
    left = "alive" if server["alive_after_host"] else "gone"
    if server["alive_after_host"]:
        left += f", parent {server['ppid_after_host']} (started by {server['ppid_at_start']})"
    if stuck is not None:
        how = "proven waiting with no timer" if stuck["decided_by"] == "proof" else "no return"
        eof = server["stdin_eof_t"]
        when = f"{stuck['t'] - eof:.2f} s after its server's stdin EOF" if eof is not None else "before stdin EOF"
        note = f"host stuck in stdio_client's exit: {how} {when} (timeout {record['fire_after_s']:g} s after"
        note += f" initialize); the server got {signals}; once the host was ended: {left}"
        return Finding(True, note, "host stuck in stdio_client's exit")
    if returned is None:
        return Finding(None, "driver reached neither return nor a stuck state")
    facts = returned["facts"]
    note = f"host returned {facts['returned_after_s']:.2f} s after connecting ({facts['raised'] or 'no error'})"
    note += f"; the server got {signals}, then {left}"
    alive = bool(server["alive_after_host"])
    return Finding(alive, note, "host returned, server left alive" if alive else "host returned, server ended")


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess, slow_arms=SLOW_ARMS, needs={"control": cancel_not_survived})

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

Decided in the driver, once the context has exited: shown when a process of
the arm (found by the arm marker) is still live WATCH s later (fast method;
the window in the window method). Nothing of the SDK runs by then; a signal
sent but not yet acted on shows as pending and gets more time. The probe
then reaps what is left by the marker.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from stdio_probe import spawn
from stdio_probe.driver import checkpoint, run_driver
from stdio_probe.model import Finding, Options, Sdk

ID = "L9"
TITLE = "a server that exits by itself leaves its descendants running"
DRIVER = "driver_descendants.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server, inherited by its descendant
SLOW_ARMS = ("control",)  # waits out the SDK's 2 s grace before its group kill: queued first
WATCH = 0.5  # seconds the descendant is watched after the context exits (fast method)
LINGER_BOUND = 6.0  # the control's server ignores stdin EOF this long (above the SDK's 2 s grace), then exits
STEP_SLACK = 10.0  # spawn, handshake and the SDK's shutdown
DESCENDANT_MARGIN = 20.0  # the descendant outlives the arm's bound by this much; the probe reaps it after


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """A server with a background descendant that exits at EOF (bug, mitigated) or ignores it (control)."""
    watch = WATCH if options.method == "fast" else options.window
    arm_id = uuid.uuid4().hex
    step_timeout = LINGER_BOUND + watch + STEP_SLACK
    descendant_s = step_timeout + DESCENDANT_MARGIN
    with tempfile.TemporaryDirectory(prefix="probe-l9-") as folder:
        args = ["--descendant-s", str(descendant_s), "--linger-bound", str(LINGER_BOUND), "--watch", str(watch)]
        args += ["--events", str(Path(folder) / "server.events"), "--arm-id", arm_id]
        args += {"control": ["--linger"], "mitigated": ["--contract"]}.get(arm, [])
        try:
            record = run_driver(sdk, args, options, script=DRIVER, step_timeout=step_timeout)
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    record = {"descendant_s": descendant_s, **record, "reaped_after_arm": reaped}
    if arm == "control" and not record.get("not_applicable") and (lacking := no_group_kill(record)):
        record["not_applicable"] = lacking
    return record


def no_group_kill(record: dict) -> str | None:
    """The control's premise fails: the server ignoring stdin EOF met the SDK's escalation, or none, and its
    descendant survived. Such an SDK has no group kill: mcp 1.0.0 signals nothing and waits for the server;
    1.6.0 to 1.10.x SIGTERM the server process alone. There is no group kill for a prompt exit to skip, so
    the case does not apply."""
    point = checkpoint(record, "left")
    if point is None or assess(record).shown is not True:
        return None
    if signals := point["facts"]["server"]["signals"]:
        return (
            f"this SDK's shutdown signals the server but not its group (control: the server got "
            f"{', '.join(signals)} and its descendant lived on): there is no group kill for a prompt exit to skip"
        )
    return (
        f"this SDK signals no server that ignores stdin EOF (control: no signal in its {LINGER_BOUND:g} s linger, "
        "it exited by itself and its descendant lived on): there is no group kill for a prompt exit to skip"
    )


def assess(record: dict) -> Finding:
    """Shown when a process of the arm's tree was still live the whole watch after stdio_client's context exited."""
    if record.get("not_applicable"):
        return Finding(None, record["not_applicable"])
    point = checkpoint(record, "left")
    if point is None:
        return Finding(None, "driver did not reach its checkpoints")
    facts = point["facts"]
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
    left = [f"{p['pid']} ({p['cmdline'] or '?'}, parent {p['ppid']})" for p in facts["survivors"]]
    note += f"; {facts['watch_s']:g} s later still live: {', '.join(left)}"
    return Finding(True, note, "descendant outlives the exited server")

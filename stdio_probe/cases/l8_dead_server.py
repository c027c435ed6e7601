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

The decision needs no long fixed wait: once the server's pid has exited and
another process holds the write end of its stdout (read from /proc/*/fd),
EOF cannot come while that process lives; the SDK is given GRACE seconds
(fast method; the window in the window method) after the exit to end the
call some other way.

The mitigated arm wraps the call in host_contract.fail_when_exits, watching
the pid that host_contract.spawned_server finds among the host's children.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from stdio_probe import spawn
from stdio_probe.driver import checkpoint, run_driver
from stdio_probe.model import Finding, Options, Sdk

ID = "L8"
TITLE = "request hangs when the dead server's stdout is held by a descendant"
DRIVER = "driver_dead_server.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server, inherited by its job
GRACE = 0.5  # seconds the SDK gets, after the server's exit, to end the call (fast method)
HOLDER_MARGIN = 20.0  # the background job outlives the arm's bound by this much; the probe reaps it after
BOUND_SLACK = 10.0  # the call's cap, beyond the grace, if the server never exits
STEP_SLACK = 10.0  # spawn, handshake and the SDK's shutdown


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """The exit call: behind a shell with a background job (bug, mitigated) or without (control)."""
    grace = GRACE if options.method == "fast" else options.window
    arm_id = uuid.uuid4().hex
    holder = grace + BOUND_SLACK + HOLDER_MARGIN if arm != "control" else 0.0
    with tempfile.TemporaryDirectory(prefix="probe-l8-") as folder:
        args = ["--grace", str(grace), "--bound", str(grace + BOUND_SLACK), "--holder-s", str(holder)]
        args += ["--events", str(Path(folder) / "server.events"), "--arm-id", arm_id]
        args += ["--contract"] if arm == "mitigated" else []
        try:
            record = run_driver(sdk, args, options, script=DRIVER, step_timeout=grace + BOUND_SLACK + STEP_SLACK)
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    record = {"holder_s": holder, "grace_s": grace, **record, "reaped_after_arm": reaped}
    if arm == "control" and not record.get("not_applicable") and (lacking := eof_not_handled(record)):
        record["not_applicable"] = lacking
    return record


def eof_not_handled(record: dict) -> str | None:
    """The control's premise fails: the server died, no process held its stdout (so EOF came), and the call
    still pended. Such an SDK fails no pending request at its server's stdout EOF (python-sdk #332, the
    plain-EOF case), so there is no EOF handling for a held stdout to defeat: the case does not apply."""
    point = checkpoint(record, "call")
    if point is None:
        return None
    facts = point["facts"]
    if facts["server"]["exit_seen_after_s"] is None or facts["holders"] or facts["call"]["outcome"] != "pending":
        return None
    return (
        f"this SDK fails no pending request at its server's stdout EOF (control: the server exited, no process "
        f"held its stdout, the call still pending {facts['grace_s']:g} s later; python-sdk #332)"
    )


def assess(record: dict) -> Finding:
    """Shown when the call was still pending GRACE after the server's exit was seen."""
    if record.get("not_applicable"):
        return Finding(None, record["not_applicable"])
    point = checkpoint(record, "call")
    if point is None:
        return Finding(None, "driver did not reach its checkpoints")
    facts = point["facts"]
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
        note += f"; call pending {facts['grace_s']:g} s after the exit"
        alive = facts["holders_alive_at_end"]
        note += f", holder{'s' if len(alive) > 1 else ''} {alive} still alive" if alive else ""
    else:
        what = call.get("error") or call["outcome"]
        note += f"; call ended {what} {call['after_exit_s']:.2f} s after the exit"
    pending = call["outcome"] == "pending"
    return Finding(pending, note, "call pending after server died" if pending else "call ended after server died")

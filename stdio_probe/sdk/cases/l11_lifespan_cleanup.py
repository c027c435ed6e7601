"""L11: a server's lifespan cleanup is skipped when a sync tool is still running at shutdown.

The SDK's high-level server (MCPServer in mcp/server/mcpserver/server.py, 2.x;
FastMCP, 1.x) runs a plain-function tool in a worker thread
(anyio.to_thread.run_sync in mcpserver/utilities/func_metadata.py, call_fn)
that no cancellation can stop: when the host leaves, the server cancels the
call's handler (the client's courtesy notifications/cancelled, then stdin
EOF ends the session), but a handler awaiting the thread waits until the
function returns, and the lifespan's cleanup runs only after that. The client meanwhile gives
it a fixed grace: stdio_client's shutdown (_stop_server_process in
mcp/client/stdio.py) closes stdin, waits PROCESS_TERMINATION_TIMEOUT (2 s),
then SIGTERMs the server's group; the server has no SIGTERM handler, so a
tool that outlasts the grace takes the cleanup with it. Related: python-sdk
#1364, #1027; fastmcp #4927.

Bug: the host leaves stdio_client as soon as the server has logged the start
of slow_sync (TOOL_S s; the window in the window method). Control: the same
with the async tool slow, which the server's cancel reaches. Mitigated: the
bug's trigger, with the connection inside host_contract.termination_grace
(the tool's length plus GRACE_MARGIN). The defect is shown when the server
is gone without having logged its lifespan cleanup; an arm whose tool would
have ended within SDK_GRACE + TRIGGER_SLACK s of the host leaving did not
test it (no evidence). The fixture logs its own end (exit, or each signal
as it arrives), so the record says how the server ended.

The fast method's TOOL_S outlasts the stock grace only: on an SDK whose grace
is longer (3 s, say), the tool finishes inside it and the cleanup runs after
it, which says nothing about a tool that outlasts the grace, while the window
method's tool does (the verdicts would differ). So a fast bug or control arm
whose tool logged tool_finished before lifespan_cleanup (finished_first) runs
again with the tool lasting the window, as the window method does, and its
record keeps the first run's outcome and why (first_attempt). The mitigated
arm is never run again: its grace is the tool's length plus GRACE_MARGIN, so
its tool finishes first by design. On the stock SDK no arm's tool finishes
first (the bug's is SIGTERMed, the control's cancelled): no second run, no
cost; an SDK that lets the tool finish (a longer grace, no signal) pays the
window once more for the arm.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

from stdio_probe.core import sample, spawn
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.sdk.driver import checkpoint, run_driver

ID = "L11"
TITLE = "lifespan cleanup skipped when a sync tool runs at shutdown"
DRIVER = "driver_lifespan.py"
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on the arm's server
TOOLS = {"bug": "slow_sync", "control": "slow", "mitigated": "slow_sync"}
SLOW_ARMS = ("bug", "mitigated", "control")  # queued first: the SDK's 2 s grace, the tool's 2.5 s
TOOL_S = 2.5  # how long the tool runs (fast method): past the SDK's 2 s grace, and little more
SDK_GRACE = 2.0  # the grace of the 2.x SDK (PROCESS_TERMINATION_TIMEOUT) the trigger must outlast
TRIGGER_SLACK = 0.1  # the SDK's exit poll and its signal's delivery
GRACE_MARGIN = 2.0  # the mitigated host's grace beyond the tool's length
STEP_SLACK = 15.0  # spawn, handshake and the SDK's whole escalation (about 6 s), beyond the tool and the grace
RETRY_WHY = "the tool finished by itself before the lifespan cleanup, inside the SDK's grace: run again for the window"


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """The arm at TOOL_S (fast method) or the window; a fast bug or control arm whose tool finished by itself before
    the cleanup ran again for the window, since a cleanup that waited for a tool that ended inside the SDK's grace
    says nothing about one that outlasts it (the record keeps why, first_attempt)."""
    seconds = TOOL_S if options.method == "fast" else options.window
    record = _attempt(arm, sdk, options, seconds)
    if arm != "mitigated" and seconds < options.window and "error" not in record and finished_first(record):
        first = {"tool_s": seconds, "outcome": assess(record).note, "why": RETRY_WHY}
        record = {**_attempt(arm, sdk, options, options.window), "first_attempt": first}
    return record


def _attempt(arm: str, sdk: Sdk, options: Options, seconds: float) -> dict:
    """One run of the arm with its tool lasting seconds, its record."""
    tool, arm_id = TOOLS[arm], uuid.uuid4().hex
    grace = seconds + GRACE_MARGIN if arm == "mitigated" else None
    with tempfile.TemporaryDirectory(prefix="probe-l11-", dir=spawn.current().run_folder()) as folder:
        events = str(Path(folder) / "server.events")
        args = ["--tool", tool, "--seconds", str(seconds), "--events", events, "--arm-id", arm_id]
        args += ["--contract", "--grace", str(grace)] if grace is not None else []
        step = seconds + GRACE_MARGIN + STEP_SLACK
        try:
            record = run_driver(sdk, args, options, DRIVER, step)
            logged = read_events(events)
            start = next((e for e in logged if e["event"] == "start"), None)
            alive = start is not None and sample.is_live(start["pid"])
        finally:
            reaped = spawn.reap_marked(ARM_MARKER, arm_id)
    server = {"pid": start["pid"] if start else None, "alive_after_host": alive, "events": logged}
    sdk_path = sdk.facts.get("mcp_path")
    arm_facts = {"tool": tool, "tool_s": seconds, "grace_s": grace, "sdk_mcp_path": sdk_path}
    record = {**arm_facts, **record, "server": server, "reaped_after_arm": reaped}
    returned = checkpoint(record, "returned")
    if arm == "mitigated" and returned and "PROCESS_TERMINATION_TIMEOUT" in (returned["facts"].get("raised") or ""):
        # termination_grace has no setting to raise here: the rule does not apply to this SDK (not the case)
        record["contract_not_applicable"] = f"termination_grace: {returned['facts']['raised']}"
    return record


def finished_first(record: dict) -> bool:
    """The arm's tool returned by itself before the lifespan cleanup ran: the cleanup may have waited for it, so
    the arm did not test a tool that outlasts the SDK's grace (the trigger did not happen)."""
    at = _timeline(record["server"]["events"], 0.0)
    return "tool_finished" in at and "lifespan_cleanup" in at and at["tool_finished"] <= at["lifespan_cleanup"]


def async_tool_not_ended(record: dict) -> str | None:
    """The control's premise fails: the async tool was not ended at shutdown either, and the SDK's SIGTERM
    skipped the cleanup (an SDK that does not cancel a request in flight when the host leaves). Then it is
    not the sync tool's thread that skips the cleanup, and what the case isolates is not there."""
    events = record["server"]["events"]
    finding = assess(record)
    if finding.shown is not True or ended_by(events) == "self":
        return None
    if any(e["event"] in ("tool_cancelled", "tool_finished") for e in events):
        return None
    return (
        f"this SDK does not end even an async tool in flight when the host leaves (control: {record['tool']} "
        f"neither cancelled nor finished, the server ended by {ended_by(events)}, no lifespan cleanup)"
    )


def _timeline(events: list[dict], origin: float) -> dict[str, float]:
    """The first time of each event, in seconds after origin (a signal's under its name)."""
    times: dict[str, float] = {}
    for event in events:
        name = event["name"] if event["event"] == "signal" else event["event"]
        times.setdefault(name, round(event["t"] - origin, 3))
    return times


def ended_by(events: list[dict]) -> str:
    """How the server ended, by its own log: the signal it logged, self (it logged its exit), or neither: a
    signal it could not log (SIGKILL, or one it had no handler for, such as SIGTERM in an SDK that resets it)."""
    signals = [e["name"] for e in events if e["event"] == "signal"]
    if signals:
        return signals[-1]
    return "self" if any(e["event"] == "exit" for e in events) else "an unlogged signal"


def assess(record: dict) -> Finding:
    """Shown when the server, its tool running past the SDK's grace, ended without its lifespan cleanup."""
    returned, server = checkpoint(record, "returned"), record["server"]
    if returned is None or "left_t" not in returned["facts"]:
        raised = returned["facts"]["raised"] if returned else None
        return Finding(None, f"the host never had the tool running ({raised or 'no return'})")
    facts, events = returned["facts"], server["events"]
    ran = next((e["mcp_path"] for e in events if e["event"] == "config"), None)
    if ran != record["sdk_mcp_path"]:
        return Finding(None, f"the server ran the mcp at {ran}, not the SDK under test's")
    started = next(e for e in events if e["event"] == "tool_started")
    remaining = started["t"] + record["tool_s"] - facts["left_t"]
    if remaining < SDK_GRACE + TRIGGER_SLACK:
        return Finding(None, f"{record['tool']} would have ended {remaining:.2f} s after the host left: no trigger")
    if server["alive_after_host"]:
        return Finding(None, "the server was still alive after the host returned")
    at = _timeline(events, facts["left_t"])
    how = ended_by(events)
    note = f"{record['tool']}({record['tool_s']:g}) in flight, {remaining:.2f} s left when the host left"
    if record["grace_s"] is not None:
        note += f" (grace {facts['termination_timeout_in_effect']:g} s)"
    ended = at.get(how if how != "self" else "exit")
    note += f"; server ended by {how}" + (f" {ended:.2f} s later" if ended is not None else "")
    for name in ("tool_finished", "tool_cancelled"):
        if name in at:
            note += f"; {name.replace('_', ' ')} at {at[name]:.2f} s"
    cleaned = "lifespan_cleanup" in at
    note += f"; lifespan cleanup at {at['lifespan_cleanup']:.2f} s" if cleaned else "; no lifespan cleanup"
    note += f"; host returned at {facts['returned_t'] - facts['left_t']:.2f} s"
    short = f"no lifespan cleanup (ended by {how})" if not cleaned else f"lifespan cleanup ran (ended by {how})"
    return Finding(not cleaned, note, short)


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess, slow_arms=SLOW_ARMS, needs={"control": async_tool_not_ended})

"""Run a client driver and observe the process tree at each of its checkpoints.

The driver reports SDK-side facts as JSON lines on a report pipe and blocks
until acknowledged; while it holds still, the probe counts its live children
from /proc itself, so the child count never depends on the SDK's own account.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from stdio_probe.core import hang, sample, spawn
from stdio_probe.core.model import Options, Sdk
from stdio_probe.core.progress import Clock

DRIVER = "driver_session_group.py"
PROGRESS_CHECK = 0.5  # seconds between looks at the tree's CPU time; a report ends the wait at once
STUCK_CHECK = 0.1  # seconds between stuck tests, when the case has one
PROOF_SAMPLES = 3  # consecutive proofs, STUCK_CHECK apart, before blocked_test calls a driver blocked for good
ARM_MARKER = "PROBE_ARM_ID"  # fixtures/driver_common.py puts it on an arm's servers (arm_id)

# stuck(driver pid, its spawn marker, seconds since the last checkpoint was acknowledged, that checkpoint's name
# (None before the first)) -> evidence that it is stuck, or None
StuckTest = Callable[[int, tuple[str, str], float, str | None], dict | None]


def stuck_test(
    options: Options,
    pending_s: Callable[[float, str | None], float | None],
    prove: Callable[[int, tuple[str, str]], dict],
) -> StuckTest:
    """A stuck test for a driver awaiting an outcome that may never come: the one rule every case's test follows.

    pending_s(since, last) gives the seconds the awaited outcome has been pending (None: not awaited yet; since
    and last as run_driver gives them). Either method: pending longer than the window. Fast, sooner:
    PROOF_SAMPLES proofs in a row (prove(driver pid, its marker): one reading of a hang.prove_* rule, its
    "proven" saying whether it held) that the outcome can never come. The proofs in a row are those of one wait:
    a checkpoint (the driver moved on) or an outcome not awaited starts the count again. The evidence carries
    its monotonic time, "t".
    """
    proofs, counting = 0, ""  # counting: the checkpoint whose wait the proofs belong to ("": none yet)

    def test(pid: int, marker: tuple[str, str], since: float, last: str | None) -> dict | None:
        nonlocal proofs, counting
        pending = pending_s(since, last)
        if counting != last or pending is None:
            proofs, counting = 0, last
        if pending is None:
            return None
        if pending > options.window:
            return {"decided_by": "window", "t": time.monotonic()}
        if options.method == "window":
            return None
        proof = prove(pid, marker)
        now = time.monotonic()
        proofs = proofs + 1 if proof["proven"] else 0
        return {"decided_by": "proof", "proof": proof, "t": now} if proofs >= PROOF_SAMPLES else None

    return test


def blocked_test(options: Options, arm_id: str, waited: Callable[[float, str | None], float | None]) -> StuckTest:
    """A stuck test (stuck_test) for a driver awaiting what only it and its arm's servers could bring (an answer, an
    error): the proof is hang.prove_blocked_together over the driver and every live process carrying the arm's
    marker (each asleep with no timeout, nothing outside them able to wake one), so the outcome can never come.
    A fix that brings it late leaves a timer, a running thread or a process awake, and is waited for."""

    def prove(pid: int, marker: tuple[str, str]) -> dict:
        servers = [p["pid"] for p in sample.marked_processes(ARM_MARKER, arm_id)]
        return hang.prove_blocked_together({pid: marker, **{server: (ARM_MARKER, arm_id) for server in servers}})

    return stuck_test(options, waited, prove)


def live_children(pid: int) -> list[dict]:
    """The driver's descendants that are alive (zombies are exited processes), with their command lines."""
    return [{"pid": child, "cmdline": sample.cmdline(child)[-160:]} for child in sample.descendants(pid)]


def run_driver(
    sdk: Sdk,
    args: list[str],
    options: Options,
    script: str = DRIVER,
    step_timeout: float | None = None,
    stuck: StuckTest | None = None,
) -> dict:
    """Spawn a driver script, answer its checkpoints, and return the raw record (error set on a timeout).

    step_timeout is the no-progress bound on the wait for each checkpoint (default: the window).
    stuck, for a case whose defect is a driver that never comes back: called every STUCK_CHECK s
    while a checkpoint is awaited, with the driver's pid, its marker, the seconds since the last one was
    acknowledged and its name; once it returns its evidence, the driver is recorded as stuck (record["stuck"],
    not an error) and ended.
    """
    step_timeout = options.window if step_timeout is None else step_timeout
    report_r, report_w = os.pipe()
    ack_r, ack_w = os.pipe()
    fd_args = ["--report-fd", str(report_w), "--ack-fd", str(ack_r)]
    child = spawn.current().spawn(sdk.python, script, [*fd_args, *args], sdk.env, pass_fds=(report_w, ack_r))
    os.close(report_w)
    os.close(ack_r)
    checkpoints: list[dict] = []
    error, stuck_evidence, tree_at_error = None, None, None
    acked = time.monotonic()
    try:
        with os.fdopen(report_r, "rb", buffering=0) as report, os.fdopen(ack_w, "wb", buffering=0) as ack:
            pending = b""
            while True:
                last = checkpoints[-1]["checkpoint"] if checkpoints else None
                test = (
                    None
                    if stuck is None
                    else lambda since=acked, last=last: stuck(child.pid, child.marker, time.monotonic() - since, last)
                )
                ended = _wait_readable(report, child.clock(), step_timeout, test)
                if isinstance(ended, dict):
                    after = checkpoints[-1]["checkpoint"] if checkpoints else None
                    stuck_evidence = {"after_checkpoint": after, "after_s": round(time.monotonic() - acked, 3), **ended}
                    break
                if ended != "ready":
                    tree_at_error = tree_now(child.pid)
                    error = {
                        "stopping": "the run stopped while the driver was between checkpoints",
                        "idle": f"driver made no progress and reached no checkpoint for {step_timeout:g} s",
                        "busy": f"driver reached no checkpoint in {time.monotonic() - acked:.0f} s, busy throughout",
                    }[ended] + f" ({_doing(tree_at_error)})"
                    break
                chunk = os.read(report.fileno(), 65536)
                if not chunk:
                    if not checkpoints or checkpoints[-1]["checkpoint"] != "done":
                        error = "driver exited before its last checkpoint"
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    point = json.loads(line)
                    point["t"] = round(time.monotonic() - child.started, 3)
                    point["children"] = live_children(child.pid)
                    checkpoints.append(point)
                    ack.write(b"k")
                    acked = time.monotonic()
                if checkpoints and checkpoints[-1]["checkpoint"] == "done":
                    break
        # its own exit, once done, is one more step: judged by progress (an interpreter's teardown on a
        # loaded machine takes seconds of wall time), not by the window, which bounds what a case observes
        if stuck_evidence is None and not child.wait_for(lambda: child.process.poll() is not None, step_timeout):
            error = error or f"driver made no progress towards its exit for {step_timeout:g} s after its checkpoints"
    finally:
        child.stop()
    record = {"checkpoints": checkpoints, **child.record()}
    if (configured := checkpoint(record, "config")) is not None:  # what the driver set, against the SDK's defaults
        record["sdk_config"] = configured["facts"]
    if (lacking := checkpoint(record, "not_applicable")) is not None:  # the SDK lacks what the case probes
        record["not_applicable"] = lacking["facts"]["reason"]
    if stuck_evidence is not None:
        record["stuck"] = stuck_evidence
    elif error is None and record["exit_code"] != 0:
        error = f"driver exited {record['exit_code']}"
    if error:
        record["error"] = error
    if tree_at_error is not None:
        record["tree_at_error"] = tree_at_error
    return record


def tree_now(pid: int) -> list[dict]:
    """The driver's tree as a bound ran out: each process's command line and what each of its threads was doing
    (its state and system call), the evidence of what it waited on."""
    return [
        {
            "pid": member,
            "cmdline": sample.cmdline(member)[-160:],
            "threads": [
                {"state": thread["state"], "syscall": _syscall_name(thread["syscall"])}
                for thread in sample.threads(member)
            ],
        }
        for member in (pid, *sample.descendants(pid))
    ]


def _wait_readable(report, clock: Clock, idle_bound: float, stuck: Callable[[], dict | None] | None) -> str | dict:
    """Wait for the report pipe while the driver's tree makes progress (spawn.wait_progressing_ends), and say how
    the wait ended ("ready", "idle", "busy", "stopping"); a stuck test's evidence ends it too, and is returned.

    The stuck test is asked once more when the bound runs out: the step's bound is a window of the driver's no
    progress a little longer than the case's window, and on a loaded machine one reading of the test (a proof
    scans /proc and every process's fds) can take seconds, or its thread wait as long for the GIL, so the case's
    window can be over by then without the test having read it so; a hang the window decides is then never an
    error."""
    evidence: dict = {}

    def ready(check: float) -> bool:
        if sample.readable(report, check if stuck is None else STUCK_CHECK):
            return True
        if stuck is not None and (found := stuck()) is not None:
            evidence["stuck"] = found
            return True
        return False

    ended = spawn.wait_progressing_ends(ready, clock, idle_bound, PROGRESS_CHECK)
    if ended in ("idle", "busy") and stuck is not None and (found := stuck()) is not None:
        evidence["stuck"] = found  # its last word before the bound: a window it had not read over yet (below)
    return evidence.get("stuck", ended)


def _doing(tree: list[dict]) -> str:
    """tree_now's reading in a few words: each process's program (its script's name) and its threads' calls."""
    parts = []
    for member in tree:
        words = member["cmdline"].split()
        script = next((w for w in words[1:] if w.endswith(".py")), words[0] if words else "?")
        calls = sorted({str(thread["syscall"]) for thread in member["threads"]})
        parts.append(f"{os.path.basename(script)} {'/'.join(calls)}")
    return "; ".join(parts)[:240]


def _syscall_name(syscall: dict) -> str | int | None:
    """A thread's system call as sample.describe_syscall read it: its name, "running" (on a CPU), "user" (in user
    space, in no system call: preempted, or queued for a CPU), or its number."""
    if syscall.get("running"):
        return "running"
    return syscall.get("name") or ("user" if syscall.get("nr") == -1 else syscall.get("nr"))


def checkpoint(record: dict, name: str) -> dict | None:
    """The named checkpoint of a driver record, if it was reached."""
    return next((p for p in record["checkpoints"] if p["checkpoint"] == name), None)

"""Run a client driver and observe the process tree at each of its checkpoints.

The driver reports SDK-side facts as JSON lines on a report pipe and blocks
until acknowledged; while it holds still, the probe counts its live children
from /proc itself, so the child count never depends on the SDK's own account.
"""

from __future__ import annotations

import json
import os
import select
import time

import psutil

from stdio_probe import sample
from stdio_probe.model import Options, Sdk
from stdio_probe.spawn import spawn, wait_progressing

DRIVER = "driver_session_group.py"
PROGRESS_CHECK = 0.5  # seconds between looks at the tree's CPU time; a report ends the wait at once


def live_children(pid: int) -> list[dict]:
    """The driver's descendants that are alive (zombies are exited processes)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                out.append({"pid": child.pid, "cmdline": " ".join(child.cmdline())[-160:]})
        except psutil.NoSuchProcess:
            continue
    return out


def run_driver(
    sdk: Sdk, args: list[str], options: Options, script: str = DRIVER, step_timeout: float | None = None
) -> dict:
    """Spawn a driver script, answer its checkpoints, and return the raw record (error set on a timeout).

    step_timeout is the no-progress bound on the wait for each checkpoint (default: the window).
    """
    step_timeout = options.window if step_timeout is None else step_timeout
    report_r, report_w = os.pipe()
    ack_r, ack_w = os.pipe()
    fd_args = ["--report-fd", str(report_w), "--ack-fd", str(ack_r)]
    child = spawn(sdk.python, script, [*fd_args, *args], sdk.env, pass_fds=(report_w, ack_r))
    os.close(report_w)
    os.close(ack_r)
    checkpoints: list[dict] = []
    error = None
    try:
        with os.fdopen(report_r, "rb", buffering=0) as report, os.fdopen(ack_w, "wb", buffering=0) as ack:
            pending = b""
            while True:
                if not _wait_readable(report, child.pid, step_timeout):
                    error = f"driver made no progress and reached no checkpoint for {step_timeout:g} s"
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
                if checkpoints and checkpoints[-1]["checkpoint"] == "done":
                    break
        if not child.wait_self_exit(options.window):
            child.stop()
    finally:
        child.stop()
    record = {"checkpoints": checkpoints, **child.record()}
    if (configured := checkpoint(record, "config")) is not None:  # what the driver set, against the SDK's defaults
        record["sdk_config"] = configured["facts"]
    if (lacking := checkpoint(record, "not_applicable")) is not None:  # the SDK lacks what the case probes
        record["not_applicable"] = lacking["facts"]["reason"]
    if error is None and record["exit_code"] != 0:
        error = f"driver exited {record['exit_code']}"
    if error:
        record["error"] = error
    return record


def _wait_readable(report, pid: int, idle_bound: float) -> bool:
    """Wait for the report pipe while the driver's tree (it and its children) makes progress (wait_progressing)."""
    return wait_progressing(
        lambda check: bool(select.select([report], [], [], check)[0]),
        lambda: _tree_cpu(pid),
        idle_bound,
        PROGRESS_CHECK,
    )


def _tree_cpu(pid: int) -> float:
    return sample.cpu_seconds(pid) + sum(sample.cpu_seconds(child["pid"]) for child in live_children(pid))


def checkpoint(record: dict, name: str) -> dict | None:
    """The named checkpoint of a driver record, if it was reached."""
    return next((p for p in record["checkpoints"] if p["checkpoint"] == name), None)

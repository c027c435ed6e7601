"""L1: the server never exits on stdin EOF while its stdout is unread.

mcp/server/stdio.py writes each message with stdout.write + stdout.flush in a
worker thread. With the client not reading, a response larger than the pipe
blocks that thread in write(2); stdin EOF then cancels the writer task, and
the cancellation waits for a thread that only a reader can release.

The mitigated arm is the host rule: host_contract.shutdown_child closes stdin,
drains stdout until EOF and waits on a bound, escalating only if it must.
bug_server_api and control_server_api are the bug/control pair through the
SDK's high-level server (MCPServer, FastMCP in 1.x), the path real servers take.
In the fast method a hang is called on hang.prove_blocked_on_pipe's proof,
the fixture answering its interval-timer query (fixtures/timer_query.py).
"""

from __future__ import annotations

import time

from stdio_probe.core import hang, observe, sample, wire
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.core.spawn import Child
from stdio_probe.sdk import fixture_arm

ID = "L1"
TITLE = "full-pipe hang: no exit on stdin EOF while stdout is unread"
# the same pair through the SDK's high-level server (MCPServer / FastMCP): recorded, judged beside (decide.PAIRS)
EXTRA_ARMS = ("bug_server_api", "control_server_api")
PAIRS = {"server API": ("bug_server_api", "control_server_api")}
PAYLOAD_BYTES = 262_144
PRE_EOF_DELAY = 2.0  # the article's wait before closing stdin (window method)
EXIT_AFTER_DRAIN = 5.0


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """bug: stdout never read; control: stdout drained; mitigated: unread, then shutdown_child.

    Every arm: one big response, then EOF. The transport arms drive the SDK's stdio_server() with a
    minimal loop (fixture_stdio_writer.py, answering ping); the *_server_api arms drive MCPServer
    (FastMCP in 1.x) through initialize and a tools/call (fixture_server_api.py).
    """
    server_api = arm.endswith("_server_api")
    script = "fixture_server_api.py" if server_api else "fixture_stdio_writer.py"
    with fixture_arm.started(sdk, script, ["--payload-bytes", str(PAYLOAD_BYTES)], timers=True) as fixture:
        return fixture.finish(_run(arm.removesuffix("_server_api"), fixture.child, fixture.timers, options, server_api))


def _run(arm: str, child: Child, timers: hang.TimerQuery, options: Options, server_api: bool) -> dict:
    record: dict = {"stdout_read": arm == "control"}
    reader = wire.StdoutReader(child) if arm == "control" else None
    if server_api:
        if not wire.initialize(child, reader, options.window):
            return {**record, "in_flight": {"seen": False, "after_s": round(time.monotonic() - child.started, 3)}}
        wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "payload"}}, reader)
    else:
        wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, reader)
    record["in_flight"] = _wait_in_flight(child, reader, options.window)
    if options.method == "window":
        time.sleep(PRE_EOF_DELAY)
    if arm == "mitigated":
        return {**record, **_shut_down(child, options)}
    eof_at = wire.close_stdin(child)
    record["eof_at_s"] = round(eof_at - child.started, 3)
    record.update(_observe_after_eof(child, eof_at, options, timers if reader is None else None))
    if child.process.poll() is None and record["decided_by"] == "proof":
        reader = wire.StdoutReader(child)  # the proof's test: drain, and it should exit by itself
        record["exited_after_drain"] = child.wait_self_exit(EXIT_AFTER_DRAIN)
    if child.process.poll() is None:
        child.stop()
    if reader is not None:
        reader.join(1.0)
        record["stdout_bytes"] = reader.bytes
    else:
        record["stdout_bytes"] = 0
    return record


def _shut_down(child: Child, options: Options) -> dict:
    """The host contract in place of the plain close: it closes stdin, drains, waits a bound, escalates."""
    eof_at = time.monotonic()
    done = child.shut_down(options.window)
    by_itself = done.ended_by == "self"
    return {
        "shutdown": {"ended_by": done.ended_by, "steps": done.steps, "stdout_eof": done.stdout_eof},
        "eof_at_s": round(eof_at - child.started, 3),
        "decided_by": "shutdown_child",
        "decided_after_eof_s": done.elapsed_s,
        "alive_at_decision": not by_itself,
        "exit_after_eof_s": done.elapsed_s if by_itself else None,
        "samples": [],
        "stdout_bytes": done.stdout_bytes,
    }


def _wait_in_flight(child: Child, reader: wire.StdoutReader | None, idle_bound: float) -> dict:
    """Wait for the response to be on its way: the pipe full (bug) or fully received (control).

    The bound counts only time in which the server used no CPU (Child.wait_for): a loaded machine
    slows its start-up, which must not pass for a response that never came.
    """
    if reader is not None:
        done = child.wait_for(lambda: 1 in reader.answers, idle_bound)
        return {"seen": done, "after_s": round(time.monotonic() - child.started, 3), "bytes_received": reader.bytes}
    read_fd = child.process.stdout.fileno()

    def full() -> bool:
        fill = sample.pipe_fill(read_fd)
        return fill["buffered"] >= fill["capacity"]

    done = child.wait_for(full, idle_bound)
    return {"seen": done, "after_s": round(time.monotonic() - child.started, 3), "pipe": sample.pipe_fill(read_fd)}


def _observe_after_eof(child: Child, eof_at: float, options: Options, timers: hang.TimerQuery | None) -> dict:
    """Sample /proc until the process exits, a hang is proven (fast method, timers given), or the window ends."""
    samples: list[dict] = []
    read_fd = child.process.stdout.fileno()

    def prove() -> dict:
        return hang.prove_blocked_on_pipe(child.pid, read_fd, marker=child.marker, ask_timers=timers.ask)

    def look() -> None:
        samples.append(sample.snapshot(child.pid, eof_at))

    proving = timers is not None and options.method == "fast"
    watched = observe.watch(child.process, eof_at, options.window, prove=prove if proving else None, look=look)
    observed = {**watched.record("eof"), "samples": samples}
    if watched.alive and timers is not None:
        observed["pipe_at_decision"] = sample.pipe_fill(read_fd)
    return observed


def assess(record: dict) -> Finding:
    """Shown when the process was still alive after EOF at the end of the window or on proof."""
    if not record.get("in_flight", {}).get("seen"):
        return Finding(None, f"response never in flight (exit {record.get('exit_code')})", "response never in flight")
    if record["alive_at_decision"]:
        how = (
            f"hang proven {record['decided_after_eof_s']:.2f} s after EOF"
            if record["decided_by"] == "proof"
            else f"alive {record['decided_after_eof_s']:.1f} s after EOF"
        )
        short = how
        pipe = record.get("pipe_at_decision")
        if pipe:
            how += f", pipe {pipe['buffered']}/{pipe['capacity']}"
            short += ", pipe full" if pipe["buffered"] >= pipe["capacity"] else ""
        if _writer_in_pipe_write(record):
            how += ", writer thread in pipe write"
        if record.get("exited_after_drain"):
            return Finding(True, f"{how}, exited {record['exit_code']} once drained", short)
        return Finding(True, f"{how}, ended by {record['ended_by']}", short)
    after = f"by itself {record['exit_after_eof_s']:.2f} s after EOF"
    return Finding(False, f"exited {record['exit_code']} {after}", f"exited {after}")


def _writer_in_pipe_write(record: dict) -> bool:
    last = record["samples"][-1] if record["samples"] else {"threads": []}
    return any(
        t["syscall"].get("name") == "write" and (t["wchan"] or "").endswith("pipe_write") for t in last["threads"]
    )


PROBE = Probe(ID, TITLE, (*CASE_ARMS, *EXTRA_ARMS), run_arm, assess, pairs=PAIRS)

"""S2: stdin EOF while a large answer sits unread in stdout: the server must still exit (L1 on any server).

The bug arm stops reading stdout, asks for the large call (--large-call), waits for the server to
block writing its answer (the pipe full, or a thread asleep in write(2) on it), and closes stdin;
the control arm does the same with stdout drained. In the fast method a
hang is called on hang.prove_blocked_on_pipe's proof (foreign: the interval timers of a server we
did not write are ruled out by its SIGALRM disposition), else the arm waits out the window.
"""

from __future__ import annotations

import os
import time

from stdio_probe.core import hang, sample, spawn, wire
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S2"
TITLE = "stdin EOF with a large answer unread: the server exits"
ARMS = ("bug", "control")
PRE_EOF_DELAY = 2.0  # window method: the article's wait before closing stdin (what the control needs)
EXIT_AFTER_DRAIN = 5.0  # seconds without progress, once drained, by which the server exits by itself
STALL_S = 0.3  # seconds a more-than-half-full pipe stays unchanged before its writer counts as stopped
CALL_ID = 1


NEEDS_LARGE_CALL = {"not_applicable": "needs --large-call 'TOOL {json arguments}' (an answer larger than the pipe)"}


def large_call(server: Server) -> dict | None:
    """The request of --large-call (an answer larger than the pipe, S2's and S11's trigger); None without one."""
    if server.large_call is None:
        return None
    tool, arguments = server.large_call
    return {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def run_arm(arm: str, server: Server, options: Options) -> dict:
    call = large_call(server)
    if call is None:
        return dict(NEEDS_LARGE_CALL)

    def body(s: session.Session) -> dict:
        if arm == "bug":
            s.reader.pause()
        if not s.send(call):
            return {"error": f"tools/call not sent: {s.write_blocked or 'stdin closed'}"}
        record = {"stdout_read": arm == "control", "in_flight": in_flight(s, options, CALL_ID)}
        if not record["in_flight"]["seen"]:
            return record
        if options.method == "window":
            time.sleep(PRE_EOF_DELAY)
        eof_at = s.close_stdin()
        record.update(observe_after(s, eof_at, options.window, prove=arm == "bug" and options.method == "fast"))
        if s.child.process.poll() is None and record["decided_by"] == "proof":
            record["exited_after_drain"] = exits_once_drained(s)
        return record

    return session.run(server, options, body)


def in_flight(s: session.Session, options: Options, call_id: int) -> dict:
    """The answer on its way: the server blocked writing it, unread (bug), or received whole (control);
    progress-bounded. S2, S11."""
    read_fd = s.child.process.stdout.fileno()
    if s.stdout_read_by_reader():
        seen = s.reader.wait_answer(call_id, options.window)
        return {"seen": seen, "bytes_received": s.reader.bytes}
    stalled = {"fill": -1, "since": time.monotonic()}

    def stopped() -> bool:
        """More than half full and unchanged for STALL_S: a non-blocking writer (libuv) waits for room in
        epoll, no thread asleep in write(2), with the pipe's pages part-filled a few KB short of its capacity."""
        fill = sample.pipe_fill(read_fd)["buffered"]
        if fill != stalled["fill"]:
            stalled.update(fill=fill, since=time.monotonic())
        return fill > sample.pipe_fill(read_fd)["capacity"] // 2 and time.monotonic() - stalled["since"] >= STALL_S

    seen = s.child.wait_for(lambda: blocked_writing(s.child.pid, read_fd) or stopped(), options.window)
    return {"seen": seen, "pipe": sample.pipe_fill(read_fd)}


def exits_once_drained(s: session.Session) -> bool:
    """The proof's test (S2, S11): stdout read again, whether the server exits by itself within EXIT_AFTER_DRAIN s
    without progress."""
    s.reader = wire.StdoutReader(s.child)
    return s.child.wait_for(lambda: s.child.process.poll() is not None, EXIT_AFTER_DRAIN)


def blocked_writing(pid: int, read_fd: int) -> bool:
    """Whether the server is blocked writing to its unread stdout: the pipe full, or (a write larger than
    the room a pipe's pages leave) data in it and a thread of the server asleep in write(2) on it."""
    fill = sample.pipe_fill(read_fd)
    if fill["buffered"] >= fill["capacity"]:
        return True
    if not fill["buffered"]:
        return False
    target = f"pipe:[{os.fstat(read_fd).st_ino}]"
    return any(
        t["state"] == "S"
        and t["syscall"].get("name") == "write"
        and sample.fd_target(pid, t["syscall"]["fd"]) == target
        for t in sample.threads(pid)
    )


def observe_after(s: session.Session, eof_at: float, bound: float, prove: bool, trigger: str = "eof") -> dict:
    """Until the exit, a proof of the hang (bug arm, fast method), or bound seconds after the trigger
    (eof_at: when stdin EOF was given for S2, SIGTERM for S11; the record's keys name it), a window of no
    progress (Session.watch)."""
    read_fd = s.child.process.stdout.fileno()

    def proof() -> dict:
        return hang.prove_blocked_on_pipe(s.child.pid, read_fd, marker=(spawn.SERVER_MARKER, s.server_id), foreign=True)

    watched = s.watch(eof_at, bound, prove=proof if prove else None)
    observed = watched.record(trigger, proof_threads=False)
    if watched.alive and not s.stdout_read_by_reader():
        observed["pipe_at_decision"] = sample.pipe_fill(read_fd)
    return observed


def alive_note(record: dict, trigger: str, name: str) -> str:
    """S2, S11: a server alive at the watch's decision, by how it was decided (proof, window, busy)."""
    after = record[f"decided_after_{trigger}_s"]
    if record["decided_by"] == "proof":
        return f"hang proven {after:.2f} s after {name}"
    if record["decided_by"] == "busy":
        return session.busy_note(after, name)
    return f"alive {after:.1f} s after {name}"


def assess(record: dict) -> Finding:
    """Shown when the server was alive after EOF at the window's end (busy at the outer bound) or on proof."""
    if "in_flight" not in record:
        return Finding(None, record.get("error", "tools/call not sent"), "tools/call not sent")
    flight = record["in_flight"]
    if not flight["seen"]:
        what = f"pipe {flight['pipe']['buffered']}/{flight['pipe']['capacity']}" if "pipe" in flight else "no answer"
        return Finding(
            None,
            f"large answer never in flight ({what}, exit {record.get('exit_code')})",
            f"answer never in flight ({what})",
        )
    if record["alive_at_decision"]:
        how = alive_note(record, "eof", "EOF")
        short = how + (", pipe full" if record.get("pipe_at_decision") else "")
        if record.get("exited_after_drain"):
            return Finding(True, f"{how}, exited {record['exit_code']} once drained", short)
        return Finding(True, f"{how}, ended by {record['ended_by']}", short)
    after = f"by itself {record['exit_after_eof_s']:.2f} s after EOF"
    return Finding(False, f"exited {record['exit_code']} {after}", f"exited {after}")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

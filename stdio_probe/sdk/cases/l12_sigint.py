"""L12: SIGINT does not end the server while its stdin is open.

mcp/server/stdio.py reads stdin in stdin_reader with `async for line in
stdin` over anyio.wrap_file: each line is a readline() in a worker thread
(anyio.to_thread.run_sync), which cannot be cancelled. SIGINT reaches the
event loop (asyncio.Runner's handler cancels the main task), the cancellation
then waits for the worker thread, and the thread sleeps in read(2) on the
stdin pipe until the client writes or closes it. A second SIGINT raises
KeyboardInterrupt into the loop, and the interpreter's shutdown then waits to
join that same thread; only a third ends the process. python-sdk #3551 (says
TTY only), #2663.

Bug: the server serving (it answered initialize) and waiting for input (its
stdin pipe empty, a thread asleep in read(2) on it or in an event loop's wait
watching it: stdin_wait; its other threads may run), stdin open, SIGINT; up to
SIGINTS of them, each recorded with the state after it. The fixture keeps the
signal dispositions the SDK sets at import and start-up (spawn.from_a_shell
gives it, or its fork server, a shell's at exec). Control: stdin
closed first (the fixture's read stream ends and it keeps its event loop
running), then SIGINT: what differs is only the thread blocked on stdin.
Mitigated: the bug's first SIGINT, then host_contract.shutdown_child (close
stdin, drain stdout, bounded wait, SIGTERM, SIGKILL).

Each SIGINT goes out once the server's main thread has been seen asleep (main_asleep): CPython runs a
signal's Python handler only there, between bytecodes, and asyncio.Runner's SIGINT handler is such a handler
with no signal wakeup fd, so a SIGINT sent while the main thread runs toward its epoll_wait(2) would be handled
only when that wait ends, with the next SIGINT, as one (bench/l12_coalesced_sigint.py widens that gap).

After each SIGINT the probe waits for the exit. In the fast method it stops
waiting on hang.prove_blocked_on_pipe's read-side proof (side="read"): every
thread asleep with no timeout, one reading the empty stdin pipe whose write
end only the probe holds, nothing else that can wake it; PROOF_SAMPLES proofs
in a row. In the window method it waits the whole window.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from stdio_probe.core import hang, observe, sample, wire
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.core.spawn import Child
from stdio_probe.sdk import fixture_arm, fixture_log

ID = "L12"
TITLE = "SIGINT does not end the server while its stdin is open"
SCRIPT = "fixture_stdio_writer.py"
SIGINTS = 3  # the reproduction: still running after the first and second, ended by the third
PROOF_SAMPLES = 1  # proofs in a row (sample.SAMPLE_INTERVAL apart; each takes two readings) before "still running"
LINGER_AFTER_EOF = 30.0  # the control's server keeps its event loop this long after stdin EOF
EXIT_BOUND = 5.0  # shutdown_child's wait for the server to exit by itself once its stdin is closed
# seconds without progress (Child.wait_for) the probe waits for the main thread to be seen asleep before a SIGINT:
# one that keeps waking runs a pending handler at its next wake anyway, so it need not be waited out
MAIN_ASLEEP_WINDOW = 1.0


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """SIGINT with stdin open (bug), with stdin closed first (control), or once then shutdown_child (mitigated)."""
    args = ["--payload-bytes", "16", "--linger-after-eof", str(LINGER_AFTER_EOF)]
    with fixture_arm.started(sdk, SCRIPT, args, timers=True) as fixture:
        return fixture.finish(_run(arm, fixture.child, fixture.timers, fixture.events, options))


def _run(arm: str, child: Child, timers: hang.TimerQuery, events: fixture_log.EventsFile, options: Options) -> dict:
    record: dict = {"serving": wire.initialize(child, None, options.window), "stdin_open": arm != "control"}
    if not record["serving"]:
        return record
    if arm != "control":  # SIGINT once the server waits for input: between lines even this reader can be cancelled
        record["idle"] = await_stdin_wait(child, record, options.window)
        if not record["idle"]:
            return record
    else:
        wire.close_stdin(child)
        ended = child.wait_for(lambda: any(e["event"] == "read_stream_ended" for e in events.events()), options.window)
        record["read_stream_ended"] = ended
        if not ended:
            return record
    started, record["sigints"] = time.monotonic(), []
    for n in range(1, (1 if arm == "mitigated" else SIGINTS) + 1):
        asleep = await_main_asleep(child)  # sent at the bound all the same
        child.signal(signal.SIGINT)
        sent = time.monotonic()
        after = _after_sigint(child, timers if arm != "control" else None, options)
        record["sigints"].append({"n": n, "sent_s": round(sent - started, 3), "main_asleep": asleep, **after})
        if after["outcome"] == "exited":
            break
    if arm == "mitigated":
        done = child.shut_down(EXIT_BOUND)
        record["shutdown"] = {"ended_by": done.ended_by, "steps": done.steps, "elapsed_s": done.elapsed_s}
    return record


def await_stdin_wait(child: Child, record: dict, window: float) -> bool:
    """Whether a thread of the server was seen waiting on its stdin with nothing in flight (stdin_wait) within
    window (counted while it made no progress: Child.wait_for). Records which wait it was (stdin_wait) and
    whether it was the SDK's read(2) (thread_in_stdin_read: a fix may have none). L12's trigger, and L13's."""

    def waiting() -> bool:  # once seen it stays seen: wait_for asks again as it returns
        record["stdin_wait"] = record.get("stdin_wait") or stdin_wait(child)
        return record["stdin_wait"] is not None

    seen = child.wait_for(waiting, window)
    if seen:
        record["thread_in_stdin_read"] = record["stdin_wait"] == "read"
    return seen


def stdin_wait(child: Child) -> str | None:
    """The syscall in which a thread of the server waits for input on its stdin pipe with nothing in flight, or
    None: the pipe empty (the server has read all the probe wrote; every request was answered before this is
    asked), and a thread asleep in read(2) on it (the SDK's reader) or in an event loop's wait that watches it
    (epoll or poll: a reader that waits in the loop). Only that thread counts: others (a watchdog, a timer)
    may keep waking, and the server is still waiting for input (L12's trigger, L13's too)."""
    if sample.pipe_fill(child.process.stdin.fileno())["buffered"]:
        return None
    inode = os.fstat(child.process.stdin.fileno()).st_ino
    for thread in sample.threads(child.pid):
        call = thread["syscall"]
        if thread["state"] == "S" and _watches(child.pid, call, inode):
            return call["name"]
    return None


def await_main_asleep(child: Child) -> bool:
    """Whether the main thread was seen asleep (main_asleep) within MAIN_ASLEEP_WINDOW; returns as soon as it was
    (once seen it stays seen: wait_for asks again as it returns), so that the SIGINT follows that reading."""
    seen = {"asleep": False}

    def asleep() -> bool:
        seen["asleep"] = seen["asleep"] or main_asleep(child)
        return seen["asleep"]

    return child.wait_for(asleep, MAIN_ASLEEP_WINDOW)


def all_asleep(child: Child) -> bool:
    """Whether the server is quiet: its stdin pipe empty, and every thread asleep in two readings
    sample.SAMPLE_INTERVAL apart without having run in between (L13: when a failed tool's traceback is written
    and the server waits again)."""
    return not sample.pipe_fill(child.process.stdin.fileno())["buffered"] and _asleep(child, lambda thread: True)


def main_asleep(child: Child) -> bool:
    """Whether the server's main thread is asleep in two readings sample.SAMPLE_INTERVAL apart without having run in
    between (its other threads may run: a watchdog): CPython runs signal handlers there, so a signal sent now
    interrupts the wait it is in and is not left to the next one (L12); its stdin may be closed (the control)."""
    return _asleep(child, lambda thread: thread["tid"] == child.pid)


def _asleep(child: Child, counted: Callable[[dict], bool]) -> bool:
    """Whether the server's threads that count are asleep in two readings, none having run in between."""
    first = [t for t in sample.threads(child.pid) if counted(t)]
    time.sleep(sample.SAMPLE_INTERVAL)
    last = [t for t in sample.threads(child.pid) if counted(t)]
    same = [(t["tid"], t["switches"]) for t in first] == [(t["tid"], t["switches"]) for t in last]
    return bool(last) and same and all(t["state"] == "S" for t in last)


def _watches(pid: int, call: dict, inode: int) -> bool:
    """Whether a thread's syscall waits on pipe inode: a read(2) of it, an epoll wait with it in its interest
    list, a poll with it in its pollfd array (what cannot be read, the call left meanwhile, says no)."""
    if call.get("name") == "read":
        fds = [call["fd"]]
    elif "epfd" in call:
        fds = [entry["fd"] for entry in sample.epoll_interest(pid, call["epfd"]) or [] if entry["ino"] == inode]
    elif "pollfds" in call:
        fds = sample.poll_fds(pid, call["pollfds"], call["nfds"]) or []
    else:
        return False
    return any(sample.fd_target(pid, fd) == f"pipe:[{inode}]" for fd in fds)


def _after_sigint(child: Child, timers: hang.TimerQuery | None, options: Options) -> dict:
    """Wait for the exit; in the fast method (stdin open, timers given) stop on PROOF_SAMPLES proofs in a row."""
    sent = time.monotonic()
    write_fd = None if child.process.stdin is None or child.process.stdin.closed else child.process.stdin.fileno()

    def prove() -> dict:
        return hang.prove_blocked_on_pipe(child.pid, write_fd, marker=child.marker, ask_timers=timers.ask, side="read")

    proving = timers is not None and write_fd is not None and options.method == "fast"
    proof = prove if proving else None
    watched = observe.watch(child.process, sent, options.window, prove=proof, in_a_row=PROOF_SAMPLES)
    running = watched.alive
    after = {"outcome": "running" if running else "exited", "decided_by": watched.decided_by}
    after["after_s"] = watched.decided_after_s
    after["exit_code"] = None if running else child.process.returncode
    if running:
        after["threads"] = [
            {"tid": t["tid"], "wchan": t["wchan"], "syscall": t["syscall"].get("name")}
            for t in sample.threads(child.pid)
        ]
        last = watched.proof
        after["why_not_proven"] = None if last is None or watched.decided_by == "proof" else last["why_not"]
    return after


def assess(record: dict) -> Finding:
    """Shown when the server was still running after the first SIGINT (proven, or the whole window)."""
    if not record.get("serving"):
        return Finding(None, f"server never answered initialize (exit {record.get('exit_code')})", "never served")
    if record.get("idle") is False:
        if record.get("ended_by") == "self":  # wait_for ends on an exit too
            return Finding(None, f"the server exited (exit {record['exit_code']}) before it waited for input", "exited")
        return Finding(None, "the server was never seen waiting for input", "never idle")
    if record.get("read_stream_ended") is False:
        return Finding(None, "the server's read stream never ended after stdin was closed", "no stdin EOF seen")
    where = "stdin open" if record["stdin_open"] else "stdin closed"
    if record.get("thread_in_stdin_read"):
        where += ", a thread in read(2) on it"
    elif record.get("stdin_wait"):
        where += f", a thread in {record['stdin_wait']} watching it"
    steps = [_step(s) for s in record["sigints"]]
    note = f"{where}: " + "; ".join(steps)
    first = record["sigints"][0]
    if shutdown := record.get("shutdown"):
        note += (
            f"; then shutdown_child: ended by {shutdown['ended_by']} {shutdown['elapsed_s']:.2f} s after closing stdin"
        )
        held = shutdown["ended_by"] in ("self", "SIGTERM")
        return Finding(not held, note, f"shutdown_child: ended by {shutdown['ended_by']}")
    if first["outcome"] == "running":
        last = record["sigints"][-1]
        end = f"exit {last['exit_code']} after SIGINT {last['n']}" if last["outcome"] == "exited" else "never ended"
        return Finding(True, note, f"SIGINT ignored, {end}")
    return Finding(False, note, f"SIGINT ended it: exit {first['exit_code']}")


def _step(step: dict) -> str:
    # a SIGINT sent while the main thread was not seen asleep may have been handled with the next (main_asleep);
    # records before the wait have no such key
    sent = "" if step.get("main_asleep", True) else " (sent with the main thread not seen asleep)"
    if step["outcome"] == "exited":
        return f"SIGINT {step['n']}{sent}: exit {step['exit_code']} {step['after_s']:.2f} s later"
    how = "proven blocked reading stdin" if step["decided_by"] == "proof" else "still running"
    return f"SIGINT {step['n']}{sent}: {how} {step['after_s']:.2f} s later"


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

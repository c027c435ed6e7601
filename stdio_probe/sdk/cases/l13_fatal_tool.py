"""L13: a fatal error in a tool leaves the server alive and mute.

python-sdk #396 (open): sys.exit() in a tool makes the client hang forever.
MCPServer (FastMCP in 1.x) turns what a tool raises into an error result only
for Exception; SystemExit is a BaseException and goes up through the session's
task group, which cancels the transport. Its stdin_reader waits for a line in
a worker thread (anyio.wrap_file: to_thread.run_sync, which cannot be
cancelled) asleep in read(2) on stdin, so the cancellation, and after it the
interpreter's shutdown (threading._shutdown joining that thread), wait until
the client writes or closes stdin. A tool returning a lone surrogate (L2's
trigger) does the same from the writer: model_dump_json fails, the task group
cancels the session, and the main thread waits in epoll_wait for the same
reader. Neither answers the call nor ends stdout, and the SDK's own client
has no default request timeout (ClientSession's read_timeout_seconds=None):
the host's call is pending forever.

Bug: the tool calls sys.exit(EXIT_CODE), stdin kept open. bug_surrogate, the
second shape, judged beside it with the same control (decide.PAIRS): the
tool returns os.fsdecode(b"bad-\\xff-name"). Control: the tool raises
ValueError, which the SDK answers with an error result. In every arm the tool
is async and does its part only on the probe's SIGUSR1, which the probe sends
once the server waits for its next line (L12's stdin_wait: however it
reads), as a server does while any tool of some length runs: a tool that
fails at once can beat the transport's reader back to its read, and the
outcome would be a race (mcp 1.8.0 exited once so). Then the probe waits from
the tool's call until the server exits, a proof says it can do nothing more,
or the window ends; in the fast method the proof is
hang.prove_blocked_on_pipe's read side (L12's): every thread asleep with no
timeout, one in read(2) on the empty stdin pipe whose write end only the probe
holds, nothing else that can wake it. What the server wrote by then is read,
so the call's id was answered or never will be unless the probe writes. Then
the probe closes stdin and records how the server ends (exit code, the
exception stderr names, whether the call was answered after EOF).

Mitigated: the bug's trigger with a host's rule, a request timeout
(REQUEST_TIMEOUT) and then host_contract.shutdown_child.
"""

from __future__ import annotations

import re
import signal
import time

from stdio_probe.core import hang, observe, sample, wire
from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk, shorten
from stdio_probe.core.spawn import Child
from stdio_probe.sdk import fixture_arm, fixture_log
from stdio_probe.sdk.cases.l12_sigint import all_asleep, await_stdin_wait

ID = "L13"
TITLE = "a fatal error in a tool leaves the server alive and mute"
SCRIPT = "fixture_server_api.py"
EXIT_CODE = 3  # the tool's sys.exit status (python-sdk #396)
SURROGATE = b"bad-\xff-name"
TOOL = {
    "bug": ["--exit-code", str(EXIT_CODE)],
    "mitigated": ["--exit-code", str(EXIT_CODE)],
    "control": ["--raise-value-error"],
    "bug_surrogate": ["--name-hex", SURROGATE.hex()],
}
GATE = ["--on-sigusr1"]  # every arm's tool is async and waits for the probe's SIGUSR1 before it does the above
# L2's result as a second shape of the fatal error, judged beside the first with the same control (decide.PAIRS)
EXTRA_ARMS = ("bug_surrogate",)
PAIRS = {"surrogate result": ("bug_surrogate", "control")}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "payload"}}
PROOF_SAMPLES = 1  # proofs in a row (sample.SAMPLE_INTERVAL apart; each takes two readings), as L12
REQUEST_TIMEOUT = 2.0  # the mitigated arm's host: seconds it waits for the answer before giving up on it
EXIT_BOUND = 5.0  # shutdown_child's wait for the server to exit by itself once its stdin is closed
SETTLE_BOUND = 2.0  # bound on the probe's own reader taking in what is already in the stdout pipe
_EXCEPTION = re.compile(r"^[\s│|+]*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)):[ \t]*([^│\n]*)", re.M)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """initialize, then tools/call of a tool that exits (bug, mitigated), returns a lone surrogate (bug_surrogate)
    or raises ValueError (control); stdin stays open until the outcome is decided."""
    with fixture_arm.started(sdk, SCRIPT, [*TOOL[arm], *GATE], timers=True) as fixture:
        return fixture.finish(_run(arm, fixture.child, fixture.events, fixture.timers, options))


def _run(arm: str, child: Child, events: fixture_log.EventsFile, timers: hang.TimerQuery, options: Options) -> dict:
    reader = wire.StdoutReader(child)
    record: dict = {"tool": " ".join(TOOL[arm]).removeprefix("--")}
    record["serving"] = wire.initialize(child, reader, options.window)
    if not record["serving"]:
        return record
    wire.send(child, CALL, reader)
    record["tool_waiting"] = child.wait_for(lambda: _logged(events, "tool_waiting") is not None, options.window)
    if not record["tool_waiting"]:
        return record
    # the fatal error strikes once the server waits for its next line, as it does while any tool of some length runs
    record["waiting_for_input"] = await_stdin_wait(child, record, options.window)
    if not record["waiting_for_input"]:
        return record
    child.signal(signal.SIGUSR1)
    record["tool_called"] = child.wait_for(lambda: _logged(events, "tool_called") is not None, options.window)
    if not record["tool_called"]:
        return record
    called = _logged(events, "tool_called")
    if arm == "mitigated":
        return {**record, **_time_out_and_shut_down(child, reader, called)}
    record["call"] = _watch_call(child, reader, called, timers, options)
    record["after_eof"] = _after_eof(child, options)
    return record


def _logged(events: fixture_log.EventsFile, event: str) -> float | None:
    """When the fixture logged event (its monotonic clock, which the probe shares), or None before it did."""
    return next((e["t"] for e in events.events() if e["event"] == event), None)


def _watch_call(
    child: Child, reader: wire.StdoutReader, since: float, timers: hang.TimerQuery, options: Options
) -> dict:
    """From the tool's call until the server exits, is proven unable to write anything more unless the probe
    writes (fast method), or the window ends; then what it had written, read to the end (_settle).

    The window counts from when the server was first seen quiet (all_asleep) or had exited, a wait
    bounded by the window counted while it used no CPU (Child.wait_for): on a loaded machine a server printing
    its traceback can take longer than a window, and a server still at work is not a mute one."""
    write_fd = child.process.stdin.fileno()

    def prove() -> dict:
        return hang.prove_blocked_on_pipe(child.pid, write_fd, marker=child.marker, ask_timers=timers.ask, side="read")

    quiet = child.wait_for(lambda: all_asleep(child), options.window)  # over at an exit too
    quiet_after = round(time.monotonic() - since, 3)
    proof = prove if options.method == "fast" else None
    watched = observe.watch(child.process, since, quiet_after + options.window, prove=proof, in_a_row=PROOF_SAMPLES)
    call = {**watched.record("call", proof_threads=False), "quiet": quiet, "quiet_after_call_s": quiet_after}
    call.update(_settle(child, reader))
    if watched.alive:  # the server's threads, the timer query's (the probe's own) left out
        query = (timers.ask() or {}).get("tid")
        threads = [t for t in sample.threads(child.pid) if t["tid"] != query]
        call["threads"] = [{"tid": t["tid"], "wchan": t["wchan"], "syscall": t["syscall"].get("name")} for t in threads]
    return {**call, "answer": _answer(reader.answers.get(CALL["id"]))}


def _settle(child: Child, reader: wire.StdoutReader) -> dict:
    """Let the reader take in what the stdout pipe holds, then stop it: its answers are then all the server wrote
    before the decision. stdout_settled False: the pipe still held bytes at the bound (they are not counted);
    stdout_ended: the server's stdout reached EOF."""
    fd = child.process.stdout.fileno()
    drained = reader.wait_for(lambda r: sample.pipe_fill(fd)["buffered"] == 0, SETTLE_BOUND)
    ended = reader.eof.is_set()
    return {"stdout_settled": reader.pause() and drained, "stdout_ended": ended}


def _after_eof(child: Child, options: Options) -> dict:
    """Close stdin and wait (the window at most) for the exit; whether the call was answered after EOF."""
    reader = wire.StdoutReader(child)
    reader.expect(CALL["id"])
    eof_at = wire.close_stdin(child)
    watched = observe.watch(child.process, eof_at, options.window)
    reader.join(1.0)
    return {**watched.record("eof"), "answer": _answer(reader.answers.get(CALL["id"]))}


def _time_out_and_shut_down(child: Child, reader: wire.StdoutReader, called: float) -> dict:
    """The host's rule: wait for the answer at most REQUEST_TIMEOUT, then host_contract.shutdown_child (close
    stdin, drain stdout, EXIT_BOUND, SIGTERM, SIGKILL). The timeout counts from the tool's call, so that it
    cannot run out before the trigger (a host's, from sending the call, runs out no later than this)."""
    answered = reader.wait_for(lambda r: CALL["id"] in r.answers, called + REQUEST_TIMEOUT - time.monotonic())
    request = {"timeout_s": REQUEST_TIMEOUT, "answered": answered, "after_s": round(time.monotonic() - called, 3)}
    reader.pause()
    done = child.shut_down(EXIT_BOUND)
    shutdown = {"ended_by": done.ended_by, "steps": done.steps, "elapsed_s": done.elapsed_s}
    return {"request": {**request, "answer": _answer(reader.answers.get(CALL["id"]))}, "shutdown": shutdown}


def _answer(message: dict | None) -> str | None:
    """What answered the call, in a few words: None for nothing."""
    if message is None:
        return None
    if "error" in message:
        error = message["error"] if isinstance(message["error"], dict) else {}
        return f"JSON-RPC error {error.get('code')}"
    result = message.get("result")
    return "error result" if isinstance(result, dict) and result.get("isError") else "result"


def cause(stderr: str) -> str | None:
    """The last exception stderr names, with its message, or None (a rich traceback's box drawn around it or not)."""
    found = _EXCEPTION.findall(stderr)
    if not found:
        return None
    name, message = found[-1]
    return shorten(f"{name.rsplit('.', 1)[-1]}: {message.strip()}".rstrip(": "), 80)


def assess(record: dict) -> Finding:
    """Shown when the call was never answered while the server lived on, its stdout open: proven unable to do
    anything more until the probe writes, or alive a window after the tool's call. The mitigated arm: shown
    unless, after the host's request timeout, shutdown_child ended the server by itself or by SIGTERM."""
    if (unready := _unready(record)) is not None:
        return unready
    if "shutdown" in record:
        return _assess_contract(record)
    call = record["call"]
    reader = "a thread in read(2) on stdin" if record["thread_in_stdin_read"] else "no thread in read(2) on stdin"
    eof = _after_eof_note(record["after_eof"], record)
    if call["answer"] is not None:
        return Finding(False, f"{reader}; answered ({call['answer']}); {eof}", f"answered: {call['answer']}")
    if not call["alive_at_decision"]:  # stdout ends with it: the host's call fails at EOF
        exited = f"exited {call['exit_after_call_s']:.2f} s after the tool's call"
        return Finding(False, f"{reader}; no answer, {exited} ({_ending(record)})", "no answer, server exited")
    if call["stdout_ended"]:
        note = f"{reader}; no answer, stdout ended after the tool's call; {eof}"
        return Finding(False, note, "no answer, stdout ended")
    proven = call["decided_by"] == "proof"
    after_call = call["decided_after_call_s"]
    how = f"proven mute {after_call:.2f} s" if proven else f"alive and mute {after_call:.1f} s"
    how += f" after the tool's call (quiet from {call['quiet_after_call_s']:.2f} s)"
    waits = ", ".join(f"{t['syscall'] or '?'} ({t['wchan'] or '?'})" for t in call.get("threads", []))
    note = f"{reader}; no answer, {how}" + (f", threads in {waits}" if waits else "")
    short = "call unanswered, server proven mute" if proven else "call unanswered, mute for the window"
    return Finding(True, f"{note}; {eof}", short)


def _unready(record: dict) -> Finding | None:
    """No evidence either way, and why, when the arm never got to the tool's failure; else None."""
    ended = f"exit {record.get('exit_code')}"
    steps = (
        ("serving", "the server never answered initialize", "never served"),
        ("tool_waiting", "the tool never started", "tool never started"),
        ("waiting_for_input", "the server was never seen waiting for input", "never seen waiting for input"),
        ("tool_called", "the tool never went on after SIGUSR1", "tool never went on"),
    )
    for key, note, short in steps:
        if not record.get(key):
            return Finding(None, f"{note} ({ended})", short)
    return None


def _ending(record: dict) -> str:
    """The exit code and the exception stderr names, if any."""
    why = cause(record["stderr"])
    return f"exit {record['exit_code']}" + (f", stderr {why}" if why else "")


def _after_eof_note(after: dict, record: dict) -> str:
    """How the server ended once the probe closed its stdin, and why (the exception on stderr)."""
    if after["alive_at_decision"]:
        text = f"alive {after['decided_after_eof_s']:.1f} s after stdin EOF, ended by {record['ended_by']}"
    else:
        text = f"exit {record['exit_code']} {after['exit_after_eof_s']:.2f} s after stdin EOF"
    if after["answer"] is not None and record["call"]["answer"] is None:
        text += ", the call answered then"
    why = cause(record["stderr"])
    return text + (f", stderr {why}" if why else "")


def _assess_contract(record: dict) -> Finding:
    request, shutdown = record["request"], record["shutdown"]
    asked = "answered" if request["answered"] else f"no answer within the {request['timeout_s']:g} s request timeout"
    note = f"{asked}; shutdown_child: ended by {shutdown['ended_by']} {shutdown['elapsed_s']:.2f} s after closing stdin"
    held = shutdown["ended_by"] in ("self", "SIGTERM")
    return Finding(not held, f"{note} ({_ending(record)})", f"timeout, then ended by {shutdown['ended_by']}")


PROBE = Probe(ID, TITLE, (*CASE_ARMS, *EXTRA_ARMS), run_arm, assess, pairs=PAIRS)

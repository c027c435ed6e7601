"""S11: SIGTERM while the large answer sits unread in stdout (stdin open): the server exits within a bound.

The article's rule 2: a server that survives SIGTERM is a bug of its own, also (above all) when
its answer is stuck in the pipe, as a host that stopped reading and now ends the server leaves it:
a graceful shutdown that waits for that write to finish never ends. The trigger is S2's with
SIGTERM in place of EOF; in the fast method a hang is called on the same kernel proof.

It judges the ending too (S14's rule, s10_clean_ending.runtime_crash), and a crash on the way out is a race of
the server's own shutdown paths: mcp-cron (go-sdk) panics "close of closed channel" on nearly every SIGTERM, and
exited 0 on one of a loaded machine's. So the trigger is tried again, on a fresh server each time, until a trial
shows the defect (session.RATE_TRIALS at most: Probe.trials), unless no code of its ran on a signal (SIGTERM's
default action killed it, or it was ignored and SIGKILL ended it): nothing to race (session.no_handler_ran).
"""

from __future__ import annotations

import signal

from stdio_probe.core import sample
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session
from stdio_probe.server.checks.s2_eof_unread import (
    CALL_ID,
    NEEDS_LARGE_CALL,
    alive_note,
    exits_once_drained,
    in_flight,
    large_call,
    observe_after,
)
from stdio_probe.server.checks.s10_clean_ending import runtime_crash

ID = "S11"
TITLE = "SIGTERM with a large answer unread: the server exits within a bound"
ARMS = ("bug",)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    call = large_call(server)
    if call is None:
        return dict(NEEDS_LARGE_CALL)
    bound = min(options.window, session.SIGTERM_BOUND)

    def body(s: session.Session) -> dict:
        s.reader.pause()
        s.send(call)
        record = {"in_flight": in_flight(s, options, CALL_ID), "bound_s": bound}
        if not record["in_flight"]["seen"]:
            return record
        record["sigterm"] = sample.disposition(s.child.pid, signal.SIGTERM)
        sent_at = s.terminate()
        record.update(observe_after(s, sent_at, bound, prove=options.method == "fast", trigger="sigterm"))
        if s.child.process.poll() is None and record["decided_by"] == "proof":
            record["exited_after_drain"] = exits_once_drained(s)
        return record

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive bound_s after SIGTERM, or proven unable to exit, or ended by a crash of its
    runtime (s10_clean_ending.runtime_crash: a death by SIGABRT and the like, a Fatal Python error or a panic)."""
    flight = record["in_flight"]
    if not flight["seen"]:
        pipe = flight["pipe"]
        what = f"pipe {pipe['buffered']}/{pipe['capacity']}"
        return Finding(None, f"large answer never in flight ({what})", f"answer never in flight ({what})")
    after = record["decided_after_sigterm_s"]
    if record["alive_at_decision"]:
        how = alive_note(record, "sigterm", "SIGTERM")
        if record.get("exited_after_drain"):
            return Finding(True, f"{how}, answer unread; exited {record['exit_code']} once drained", how)
        return Finding(True, f"{how}, answer unread, ended by {record['ended_by']}", how + ", pipe full")
    if crashed := runtime_crash(record):  # it ended, but by a crash of its runtime (S14's rule)
        return Finding(True, f"ended with {crashed} {after:.2f} s after SIGTERM, answer unread", crashed[:70])
    how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
    note = f"ended ({how}) {after:.2f} s after SIGTERM, answer unread"
    return Finding(False, note, f"{how} {after:.2f} s after SIGTERM")


def settled(record: dict) -> str | None:
    """A trial in which no code of the server's ran on SIGTERM settles the race (session.no_handler_ran)."""
    return session.no_handler_ran(record, "SIGTERM")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess), trials=session.RATE_TRIALS, settles=settled)

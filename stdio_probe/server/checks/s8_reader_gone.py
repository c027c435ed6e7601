"""S8: the client closes its read end of the server's stdout, sends a request, closes stdin:
the server exits within a bound and does not spin.

A host that crashed or closed stdout early leaves the server writing into a pipe nobody reads:
its write fails (EPIPE, or SIGPIPE where not ignored). A server that crashes loudly, loops on
the failing write, or never notices the EOF that follows is the defect (typescript-sdk PR #2579).
The server's CPU time is sampled from the trigger to its end: spinning is using more than
SPIN_SHARE of one core over the observation, and at least SPIN_CPU seconds of CPU: a server that
exits at once may spend most of a short observation shutting down (an interpreter's teardown),
which is no spin.

The probe's reader must have stopped before the read end is closed: a thread of the probe still in
read() keeps the pipe's read end open in the kernel, the server's write succeeds, and the trigger
never happens; an arm whose reader did not stop records that and no verdict. The watch is a window of no
progress (Session.watch): a server that spins is never idle, and is watched to the outer bound.

A server that never exits on EOF may still die of SIGPIPE writing the answer before it reads that EOF (mcp-cron,
go-sdk: both ways in three runs): the trigger is tried again, on a fresh server each time, until a trial shows
the defect (session.RATE_TRIALS at most: Probe.trials). Only a death by SIGPIPE can hide it: a trial in which the
server ended otherwise (an exit of its own, after the failed write and the EOF) settles the check (settled), and no
more trials are run. A server that ignores SIGPIPE (Node, Python, rmcp's) gets EPIPE instead, so one trial decides.
"""

from __future__ import annotations

import time
from contextlib import suppress

from stdio_probe.core import sample
from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S8"
TITLE = "reader gone (stdout closed), then EOF: the server exits and does not spin"
ARMS = ("bug",)
SPIN_SHARE = 0.5  # of one core, over the observation
SPIN_CPU = 1.0  # seconds of CPU: more than an interpreter's teardown takes
PING_ID = 2


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """After the opening: stop reading, close the probe's read end, the era's liveness request (ping;
    server/discover in 2026-07-28), close stdin; watch the exit and the CPU time."""
    bound = options.window

    def body(s: session.Session) -> dict:
        if not s.reader.pause():
            return {"reader_stopped": False}
        with suppress(OSError):
            s.child.process.stdout.close()
        s.child.supervisor.forks_settled()  # no other arm's child, between fork and exec, still holds that read end
        s.reader = None  # the probe no longer reads stdout: nothing to read from
        cpu_before, started = sample.cpu_seconds(s.child.pid), time.monotonic()
        s.send(s.liveness_request(PING_ID))
        s.close_stdin()
        peak = [cpu_before]  # the highest CPU reading while it lived (a gone process reads 0.0)

        def look() -> None:
            peak[0] = max(peak[0], sample.cpu_seconds(s.child.pid))

        watched = s.watch(started, bound, look=look)
        observed = watched.decided_after_s
        return {
            "bound_s": bound,
            **session.exited(watched),
            "cpu_s": round(peak[0] - cpu_before, 3),
            "observed_s": observed,
        }

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive at the bound or spent more than SPIN_SHARE of a core while alive."""
    if record.get("reader_stopped") is False:
        return Finding(None, "the probe's stdout reader did not stop: the read end could not be closed alone")
    cpu, observed = record["cpu_s"], record["observed_s"]
    spin = observed > 0 and cpu / observed > SPIN_SHARE and cpu >= SPIN_CPU
    share = f"CPU {cpu:.2f} s in {observed:.2f} s"
    if record["exit_after_s"] is None:
        alive = f"alive {record['bound_s']:g} s after the reader left and EOF"
        if "busy_after_s" in record:  # a spinning server is busy: the outer bound ends its watch
            alive = session.busy_note(record["busy_after_s"], "the reader left and EOF")
        return Finding(True, f"{alive}, {share}{' (spinning)' if spin else ''}", alive + (", spinning" if spin else ""))
    how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
    if spin:
        return Finding(True, f"ended ({how}) after {observed:.2f} s, but spinning: {share}", f"spun: {share}")
    return Finding(False, f"ended ({how}) {observed:.2f} s after the reader left, {share}", f"{how} {observed:.2f} s")


def settled(record: dict) -> str | None:
    """Why a trial that ended without the defect needs no other: the server was not killed by SIGPIPE, the one
    outcome behind which the race (the answer's failed write before EOF is read) hides a server that stays."""
    if record.get("signal") == "SIGPIPE":
        return None
    how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
    return f"it ended ({how}), not killed by SIGPIPE"


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess), trials=session.RATE_TRIALS, settles=settled)

"""S9: SIGINT while idle (after the handshake, stdin open): the server exits within a bound.

A terminal's Ctrl-C, and hosts that stop a server as a user would, send SIGINT; python-sdk #3551
(L12 here) leaves the server reading stdin after it. The server starts with SIGINT's default
disposition even when the probe's is ignored (Supervisor.spawn_command), as it would from a terminal.

Whether SIGINT finds a Python SDK server's stdin reader asleep in read(2) (L12: alive) or not yet back in it
(its task cancelled: it ends, 4 s later on a loaded machine) is a race: the trigger is tried again, on a fresh
server each time, until a trial shows the defect (session.RATE_TRIALS at most: Probe.trials). The race is a
handler's: a server whose SIGINT had its default action when it was sent (no handler, not ignored, read from
/proc just before) and that was killed by it was ended by the kernel, with none of its code run, so that trial
settles the check (settled).
"""

from __future__ import annotations

import signal

from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S9"
TITLE = "SIGINT while idle: the server exits within a bound"
ARMS = ("bug",)
PING_ID = 2


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """The opening, the era's liveness request answered (so the opening was handled: the server is idle),
    then SIGINT to the server's pid alone, what it did with SIGINT read just before (sigint: caught, ignored,
    default: session.after_signal); wait the bound for its exit."""

    def body(s: session.Session) -> dict:
        if s.send(s.liveness_request(PING_ID)):
            s.reader.wait_answer(PING_ID, options.window)
        bound = min(options.window, session.SIGTERM_BOUND)
        return session.after_signal(s, signal.SIGINT, bound, options)

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive bound seconds after SIGINT."""
    return session.assess_exit(record)


def settled(record: dict) -> str | None:
    """A trial in which no code of the server's ran on SIGINT (its default action killed it) settles the race: no
    handler of its could race its stdin reader (session.no_handler_ran)."""
    return session.no_handler_ran(record, "SIGINT")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess), trials=session.RATE_TRIALS, settles=settled)

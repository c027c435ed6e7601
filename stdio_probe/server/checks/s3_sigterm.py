"""S3: SIGTERM while idle (after the handshake, stdin open): the server must exit within a bound.

Its arm is also S5's sigterm arm and S14's (Probe.same_arms): it records what outlived the server
(session.outliving) and how the server ended, so where they run together one start of the server serves all three.
"""

from __future__ import annotations

import signal

from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S3"
TITLE = "SIGTERM while idle: the server exits within a bound"
ARMS = ("bug",)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """initialize, then SIGTERM to the server's pid alone; wait the bound for its exit (and once more after a
    second SIGTERM: session.after_signal); then what outlived the server."""

    def body(s: session.Session) -> dict:
        before = session.descendants(s)
        bound = min(options.window, session.SIGTERM_BOUND)
        return session.after_signal(s, signal.SIGTERM, bound, options) | session.outliving(s, before)

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive bound seconds after SIGTERM."""
    return session.assess_exit(record)


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

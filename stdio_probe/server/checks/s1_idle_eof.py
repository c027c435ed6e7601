"""S1: after the handshake, stdin EOF: the server must exit by itself (the spec's stdio shutdown).

Its arm is also S5's eof arm and S10's (Probe.same_arms): it records what outlived the server (session.outliving)
and how the server ended, so where they run together one start of the server serves all three.
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session

ID = "S1"
TITLE = "idle stdin EOF: the server exits by itself"
ARMS = ("bug",)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """initialize, then close stdin; wait the window for the exit; then what outlived the server."""

    def body(s: session.Session) -> dict:
        before = session.descendants(s)
        return session.exit_after(s, "EOF", options.window, s.close_stdin()) | session.outliving(s, before)

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive a window after EOF."""
    return session.assess_exit(record)


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.opened(assess))

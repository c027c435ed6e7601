"""S1: after the handshake, stdin EOF: the server must exit by itself (the spec's stdio shutdown)."""

from __future__ import annotations

from stdio_probe.checks import session
from stdio_probe.model import Finding, Options, Server

ID = "S1"
TITLE = "idle stdin EOF: the server exits by itself"
ARMS = ("bug",)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """initialize, then close stdin; wait the window for the exit."""

    def body(s: session.Session) -> dict:
        if not s.initialize(options):
            return {"initialized": False}
        s.close_stdin()
        return {"initialized": True, "exit_after_eof_s": s.wait_exit(options.window), "window_s": options.window}

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive a window after EOF."""
    if not record.get("initialized"):
        return Finding(None, f"no answer to initialize (exit {record.get('exit_code')})", "no answer to initialize")
    after = record["exit_after_eof_s"]
    if after is None:
        return Finding(True, f"alive {record['window_s']:g} s after EOF, ended by {record['ended_by']}",
                       f"alive {record['window_s']:g} s after EOF")
    return Finding(False, f"exited {record['exit_code']} by itself {after:.2f} s after EOF",
                   f"exited {record['exit_code']} {after:.2f} s after EOF")

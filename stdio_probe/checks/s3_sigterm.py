"""S3: SIGTERM while idle (after the handshake, stdin open): the server must exit within a bound."""

from __future__ import annotations

from stdio_probe.checks import session
from stdio_probe.model import Finding, Options, Server

ID = "S3"
TITLE = "SIGTERM while idle: the server exits within a bound"
ARMS = ("bug",)


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """initialize, then SIGTERM to the server's pid alone; wait the bound for its exit."""
    bound = min(options.window, session.SIGTERM_BOUND)

    def body(s: session.Session) -> dict:
        if not s.initialize(options):
            return {"initialized": False}
        s.terminate()
        return {"initialized": True, "exit_after_sigterm_s": s.wait_exit(bound), "bound_s": bound}

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when the server was alive bound seconds after SIGTERM."""
    if not record.get("initialized"):
        return Finding(None, f"no answer to initialize (exit {record.get('exit_code')})", "no answer to initialize")
    after = record["exit_after_sigterm_s"]
    if after is None:
        return Finding(True, f"alive {record['bound_s']:g} s after SIGTERM, ended by {record['ended_by']}",
                       f"alive {record['bound_s']:g} s after SIGTERM")
    how = f"signal {record['signal']}" if record["signal"] else f"exit {record['exit_code']}"
    return Finding(False, f"ended ({how}) {after:.2f} s after SIGTERM", f"{how} {after:.2f} s after SIGTERM")

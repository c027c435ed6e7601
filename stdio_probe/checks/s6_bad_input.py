"""S6: a line of invalid JSON and a line of invalid UTF-8 on stdin, then ping: the server still answers."""

from __future__ import annotations

from stdio_probe.checks import session
from stdio_probe.model import Finding, Options, Server

ID = "S6"
TITLE = "invalid JSON and invalid UTF-8 lines, then ping answered"
ARMS = ("bug",)
BAD_LINES = (b'{"jsonrpc": "2.0", "id": 7, "method": \n', b'{"jsonrpc": "2.0", "method": "\xff\xfe"}\n')
PING_ID = 2


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """After the handshake, both bad lines, then ping; wait (progress-bounded) for its answer."""

    def body(s: session.Session) -> dict:
        if not s.initialize(options):
            return {"initialized": False}
        sent = all(s.send(line) for line in BAD_LINES) and s.send({"jsonrpc": "2.0", "id": PING_ID, "method": "ping"})
        answered = sent and s.child.wait_for(lambda: PING_ID in s.reader.ids, options.window)
        return {
            "initialized": True,
            "input_accepted": sent,
            "ping_answered": answered,
            "alive_after": s.child.process.poll() is None,
        }

    return session.run(server, options, body)


def assess(record: dict) -> Finding:
    """Shown when ping got no answer after the bad lines."""
    if not record.get("initialized"):
        return session.not_initialized(record)
    if record["ping_answered"]:
        return Finding(False, "ping answered after invalid JSON and invalid UTF-8", "ping answered after bad lines")
    if not record["alive_after"]:
        return Finding(
            True,
            f"exited {record['exit_code']} after the bad lines, ping unanswered",
            f"exited {record['exit_code']} on bad input",
        )
    return Finding(True, "alive, but ping unanswered after the bad lines", "ping unanswered after bad lines")

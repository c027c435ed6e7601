"""One server under one check's arm: start it, shake hands, end it, and reap its whole tree.

Every check starts its server here (spawn.spawn_command: own session, markers, bounded stderr)
and reads its stdout through wire.BoundedReader. end() leaves nothing alive: the server's
process group, then everything carrying its marker or in its session, and says what it reaped.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import suppress

from stdio_probe import sample, spawn, wire
from stdio_probe.model import Options, Server

SIGTERM_BOUND = 5.0  # seconds a server has to exit after SIGTERM (capped by the window)


class Session:
    """A started server: child, its marker, and its stdout reader (None once the arm stops reading)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.child, self.server_id = spawn.spawn_command(server.command)
        self.sid = self.child.pid  # its own session: start_new_session
        self.reader: wire.BoundedReader | None = wire.BoundedReader(self.child)

    def initialize(self, options: Options) -> bool:
        """initialize, its answer, notifications/initialized; bounded as wire.initialize bounds it."""
        try:
            return wire.initialize(self.child, self.reader, options.window)
        except (BrokenPipeError, OSError):
            return False

    def stdout_read_by_reader(self) -> bool:
        """Whether a reader still drains stdout (not paused)."""
        return self.reader is not None and not self.reader.paused

    def send(self, message: dict | bytes) -> bool:
        """One message (or raw line) on stdin; False when the server no longer reads it."""
        try:
            if isinstance(message, bytes):
                self.child.process.stdin.write(message)
                self.child.process.stdin.flush()
            else:
                wire.send(self.child, message)
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def close_stdin(self) -> float:
        with suppress(BrokenPipeError, OSError):
            self.child.process.stdin.close()
        return time.monotonic()

    def wait_exit(self, bound: float) -> float | None:
        """Seconds until the server exited by itself, or None if it was alive after bound."""
        started = time.monotonic()
        return round(time.monotonic() - started, 3) if self.child.wait_self_exit(bound) else None

    def terminate(self) -> None:
        """SIGTERM to the server process alone, as a host's process.terminate() sends it."""
        with suppress(ProcessLookupError):
            os.kill(self.child.pid, signal.SIGTERM)

    def tree(self) -> list[dict]:
        """The live processes of this server's tree: by its marker, and by its session."""
        found = {p["pid"]: p for p in sample.marked_processes(spawn.SERVER_MARKER, self.server_id)}
        found |= {p["pid"]: p for p in sample.session_members(self.sid)}
        return [{**p, "ppid": sample.parent_pid(p["pid"])} for pid, p in sorted(found.items()) if pid != os.getpid()]

    def end(self) -> dict:
        """Stop the server (group SIGTERM, then SIGKILL) and reap its whole tree; its exit facts."""
        self.child.stop()
        left = [p for p in self.tree() if p["pid"] != self.child.pid]
        reaped = spawn.reap_marked(spawn.SERVER_MARKER, self.server_id)
        for process in left:
            if sample.is_live(process["pid"]):
                with suppress(ProcessLookupError):
                    os.kill(process["pid"], signal.SIGKILL)
        if self.reader is not None:
            self.reader.join(1.0)
        record = self.child.record()
        record["command"] = self.server.command
        record["reaped_at_end"] = [_brief(p) for p in {p["pid"]: p for p in left + reaped}.values()]
        if self.reader is not None:
            record["stdout"] = {"bytes": self.reader.bytes, "lines": self.reader.lines}
            if self.reader.offending:
                record["stdout"]["offending"] = self.reader.offending
        return record


def _brief(process: dict) -> dict:
    return {"pid": process["pid"], "cmdline": process["cmdline"]}


def run(server: Server, options: Options, body) -> dict:
    """Start the server, run body(session) for the arm's own record, end it whatever happens."""
    try:
        session = Session(server)
    except (OSError, ValueError) as exc:
        return {"error": f"cannot start {server.command!r}: {exc}"}
    try:
        record = body(session)
    finally:
        facts = session.end()
    return {**facts, **record}

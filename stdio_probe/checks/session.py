"""One server under one check's arm: start it, shake hands, end it, and reap its whole tree.

Every check starts its server here (spawn.spawn_command: own session, markers, bounded stderr)
and reads its stdout through wire.StdoutReader. end() leaves nothing alive: the server's
process group, then everything carrying its marker or in its session, and says what it reaped.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import suppress

from stdio_probe import sample, spawn, wire
from stdio_probe.model import Finding, Options, Server

SIGTERM_BOUND = 5.0  # seconds a server has to exit after SIGTERM (capped by the window)
REAP_BOUND = 1.0  # seconds SIGKILLed descendants have to be gone


class Session:
    """A started server: child, its marker, and its stdout reader (None once the arm stops reading)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.child, self.server_id = spawn.spawn_command(server.command)
        self.sid = self.child.pid  # its own session: start_new_session
        self.reader: wire.StdoutReader | None = wire.StdoutReader(self.child)

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

    def reap_tree(self) -> list[dict]:
        """Kill the server's whole tree: its process group and session (the leader may be gone), and
        everything carrying its marker (re-parented or moved to a new session). What was alive, as found."""
        left = {p["pid"]: _brief(p) for p in self.tree() if p["pid"] != self.child.pid}
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.sid, signal.SIGKILL)
        left |= {p["pid"]: _brief(p) for p in spawn.reap_marked(spawn.SERVER_MARKER, self.server_id)}
        for pid in left:
            if sample.is_live(pid):
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + REAP_BOUND
        while any(sample.is_live(pid) for pid in left) and time.monotonic() < deadline:
            time.sleep(0.01)
        return [left[pid] for pid in sorted(left)]

    def end(self) -> dict:
        """Stop the server (group SIGTERM, then SIGKILL) and reap its whole tree; its exit facts."""
        self.child.stop()
        reaped = self.reap_tree()
        if self.reader is not None:
            self.reader.join(1.0)
        record = self.child.record()
        record["command"] = self.server.command
        record["reaped_at_end"] = reaped
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


def not_initialized(record: dict) -> Finding:
    """No evidence either way: the server never answered initialize."""
    return Finding(None, f"no answer to initialize (exit {record.get('exit_code')})", "no answer to initialize")


def exit_after(s: Session, trigger: str, bound: float) -> dict:
    """The record of a trigger (stdin EOF, SIGTERM) already given: how long the server took to exit, within bound."""
    return {"initialized": True, "trigger": trigger, "exit_after_s": s.wait_exit(bound), "bound_s": bound}


def assess_exit(record: dict) -> Finding:
    """S1, S3: shown when the server was alive bound_s after its trigger; else how it ended, and when."""
    if not record.get("initialized"):
        return not_initialized(record)
    trigger, after = record["trigger"], record["exit_after_s"]
    if after is None:
        alive = f"alive {record['bound_s']:g} s after {trigger}"
        return Finding(True, f"{alive}, ended by {record['ended_by']}", alive)
    how = f"signal {record['signal']}" if record["signal"] else f"exit {record['exit_code']}"
    return Finding(False, f"ended ({how}) {after:.2f} s after {trigger}", f"{how} {after:.2f} s after {trigger}")

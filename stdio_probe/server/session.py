"""One server under one check's arm: start it, open the connection in its era, end it, and reap its whole tree.

Every check starts its server here (Supervisor.spawn_command: own session, markers, bounded stderr)
and reads its stdout through wire.StdoutReader. end() leaves nothing alive: the server's
process group, then everything carrying its marker or in its session, and says what it reaped.
Each start of a server is in a sandbox of its own (spawn.Sandbox: its HOME, XDG folders, TMPDIR and working
folder), so the arms of one server can run side by side; its record says which (end: sandbox). A word of its
command naming a file or folder where the probe runs is started by that file's absolute path (spawn.reachable);
every record says the command, and its processes' command lines, as given.
The era (stdio_probe.core.eras) is found once per server by find_era, on a process of its own;
every request a check sends then carries what that era requires (Session.send).
Every window a check waits is one of no progress of the server's tree (Session.clock, method.md "The
window rule"); a server still making progress at the outer bound is "busy" (busy_note), never a hang.
"""

from __future__ import annotations

import functools
import os
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import replace

from stdio_probe.core import eras, hang, mcp_schema, observe, progress, sample, spawn, wire
from stdio_probe.core.model import Finding, Options, Server

SIGTERM_BOUND = 5.0  # seconds a server has to exit after SIGTERM (capped by the window)
OPENING_ID = 0
# trials of a check whose defect can hide in one run (Probe.trials, runner.run_trials): a defect that shows in one
# trial of five is missed by every one of them 0.8 ** 21 = 0.9 % of the time (20 trials: 1.2 %)
RATE_TRIALS = 21


class Session:
    """A started server: child, its marker, its stdout reader (None once the arm stops reading), and
    the era it is spoken to in (server.protocol; legacy where none was set).

    With judged (S4), an mcp_schema.Exchange sees every request the probe sends and judges every
    message the server writes; line_cap lets the reader parse a large answer whole.
    """

    def __init__(self, server: Server, judged: bool = False, line_cap: int = wire.LINE_CAP) -> None:
        self.server = server
        self.era = server.protocol or eras.LEGACY
        self.opening: dict | None = None  # the opening request's method and how it was answered
        revision = eras.MODERN if eras.is_modern(self.era) else mcp_schema.ASKED
        self.exchange = mcp_schema.Exchange(revision) if judged else None
        env, supervisor = server.env, spawn.current()
        self.sandbox = supervisor.sandbox()
        given = shlex.split(server.command)
        started = spawn.reachable(given, os.getcwd())
        self.as_given = {word: was for word, was in zip(started, given, strict=True) if word != was}  # tree()
        self.child, self.server_id = supervisor.spawn_command(
            shlex.join(started), env.values, env.inherit, self.sandbox
        )
        self.sid = self.child.pid  # its own session: start_new_session
        judge = self.exchange.judge if self.exchange is not None else None
        self.reader: wire.StdoutReader | None = wire.StdoutReader(self.child, judge, line_cap)
        self.write_blocked: str | None = None  # why a write to the server gave up (it stopped reading stdin)

    def initialize(self, options: Options) -> bool:
        """Open the connection as its era does: initialize, its answer, notifications/initialized
        (legacy); server/discover and its answer (modern, where every later request carries the
        envelope instead). True when the opening request got a result, within the idle bound."""
        request = eras.opening_request(self.era, OPENING_ID)
        self.opening = {"method": request["method"], "answer": None}
        if not self.send(request):
            return False
        self.reader.wait_answer(OPENING_ID, options.window)
        answer = self.answer(OPENING_ID)
        if answer is not None and "oversize_bytes" in answer:  # answered, too long to parse
            answer = {"id": OPENING_ID, "result": {}}
        self.opening["answer"] = eras.answer_text(answer)
        if answer is None or not isinstance(answer.get("result"), dict):
            return False
        if not eras.is_modern(self.era):
            self.opening["version"] = answer["result"].get("protocolVersion")
            return self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return True

    def answer(self, request_id: int) -> dict | None:
        """The response to request_id (a request sent through send: the reader keeps its answer), if any."""
        return self.reader.answers.get(request_id)

    def liveness_request(self, request_id: int) -> dict:
        """A request the era has that changes nothing (ping; server/discover in 2026-07-28)."""
        return eras.liveness_request(self.era, request_id)

    def stdout_read_by_reader(self) -> bool:
        """Whether a reader still drains stdout (not paused)."""
        return self.reader is not None and not self.reader.paused

    def send(self, message: dict | bytes) -> bool:
        """One message (a request gains what the era requires: eras.stamp) or raw line on stdin;
        False when the server no longer reads it."""
        if isinstance(message, dict):
            message = eras.stamp(self.era, message)
            if self.exchange is not None:
                self.exchange.sent(message)
        try:
            wire.send(self.child, message, self.reader)
        except wire.WriteBlocked as exc:
            self.write_blocked = str(exc)
            return False
        except (OSError, ValueError):
            return False
        return True

    def close_stdin(self) -> float:
        return wire.close_stdin(self.child)

    def clock(self) -> progress.Clock:
        """The server's no-progress clock: its tree's CPU, the bytes on its pipes (Child.clock)."""
        return self.child.clock()

    def watch(self, since: float, window: float, **kwargs) -> observe.Watched:
        """observe.watch of the server from since, within a window of no progress (clock)."""
        return observe.watch(self.child.process, since, window, clock=self.clock(), **kwargs)

    def wait_exit(
        self, bound: float, since: float | None = None, prove: Callable[[], dict] | None = None
    ) -> observe.Watched:
        """Until the server exits by itself, within a window of bound s of no progress from since (its trigger's
        monotonic time, read before the trigger was given), or from now (watch); or until prove() proves it cannot
        (idle_on_stdin: the fast method's)."""
        return self.watch(time.monotonic() if since is None else since, bound, prove=prove)

    def idle_on_stdin(self) -> dict:
        """hang's proof that the server can do nothing more until the probe writes to its stdin or closes it: every
        thread asleep with no timeout, one in read(2) on the stdin pipe whose write end only the probe holds, and
        nothing else that could wake one (method.md, "The wake-source rule")."""
        stdin_fd, marker = self.child.process.stdin.fileno(), (spawn.SERVER_MARKER, self.server_id)
        return hang.prove_blocked_on_pipe(self.child.pid, stdin_fd, marker=marker, foreign=True, side="read")

    def terminate(self) -> float:
        """SIGTERM to the server process alone, as a host's process.terminate() sends it; returns when, on the
        monotonic clock, read before the signal (close_stdin)."""
        at = time.monotonic()
        self.child.signal(signal.SIGTERM)
        return at

    def tree(self) -> list[dict]:
        """The live processes of this server's tree: by its marker, and by its session while its leader, the
        server, is not reaped (after that, its number may be a stranger's session: ours)."""
        found = {p["pid"]: p for p in sample.marked_processes(spawn.SERVER_MARKER, self.server_id)}
        if self.child.signal(0):
            found |= {p["pid"]: p for p in sample.session_members(self.sid)}
        parents = {pid: sample.parent_pid(pid) for pid in found}
        return [
            {**p, "cmdline": self._given(p["cmdline"]), "ppid": parents[pid], "adopted": parents[pid] == os.getpid()}
            for pid, p in sorted(found.items())
            if pid != os.getpid()
        ]

    def _given(self, cmdline: str) -> str:
        """A command line of the tree (words joined by spaces) with each word the probe resolved (spawn.reachable)
        as the command gave it: no path of this machine that the probe wrote in is recorded. A word holding a
        space (split in two here) or cut short by sample.cmdline's bound is left resolved."""
        return " ".join(self.as_given.get(word, word) for word in cmdline.split(" "))

    def ours(self, pid: int) -> bool:
        """Whether pid is of this server's tree: its marker, or its session while the server is not reaped."""
        if sample.carries(pid, spawn.SERVER_MARKER, self.server_id):
            return True
        return sample.session_id(pid) == self.sid and self.child.signal(0)

    def reap_tree(self) -> list[dict]:
        """Kill the server's whole tree: its process group (through the server's pidfd: the leader may be gone)
        and everything of its tree (re-parented or moved to a new session). What was alive, as found."""
        self.child.signal_group(signal.SIGKILL)
        # rounds of rescan and SIGKILL until the tree is empty: a pid hopper's next pid is found too
        left = spawn.kill_rounds(
            lambda: {p["pid"]: p for p in self.tree() if p["pid"] != self.child.pid}, self.ours, 0.0
        )
        return [_brief(left[pid]) for pid in sorted(left)]

    def end(self) -> dict:
        """Stop the server (group SIGTERM, then SIGKILL) and reap its whole tree; its exit facts."""
        self.child.stop()
        reaped = self.reap_tree()
        if self.reader is not None:
            self.reader.join(1.0)
        record = self.child.record()
        record["command"] = self.server.command
        record["protocol"] = self.era
        record["sandbox"] = self.sandbox.described()
        if self.opening is not None:
            record["opening"] = self.opening
        record["reaped_at_end"] = reaped
        if self.reader is not None:
            record["stdout"] = {"bytes": self.reader.bytes, "lines": self.reader.lines}
            if self.reader.offending:
                record["stdout"]["offending"] = self.reader.offending
            if self.reader.requests:
                record["stdout"]["server_requests"] = self.reader.requests
        if self.write_blocked:
            record["write_blocked"] = self.write_blocked
        return record


def _brief(process: dict) -> dict:
    return {"pid": process["pid"], "cmdline": process["cmdline"]}


def run(server: Server, options: Options, body, opening: bool = True, **session_args) -> dict:
    """Start the server, open the connection as its era does (unless the body opens it itself: opening
    False), run body(session) for the arm's own record, end it whatever happens. A server that never
    answered the opening request gives {"initialized": False} and no body: opened() judges that."""
    try:
        session = Session(server, **session_args)
    except (OSError, ValueError) as exc:
        return {"error": f"cannot start {server.command!r}: {exc}"}
    try:
        if not opening:
            record = body(session)
        elif session.initialize(options):
            record = {"initialized": True, **body(session)}
        else:
            record = {"initialized": False}
    finally:
        facts = session.end()
    return {**facts, **record}


def opened(judge: Callable[[dict], Finding]) -> Callable[[dict], Finding]:
    """A server check's assess: no evidence either way when the server never answered the opening request
    (not_initialized), else judge's finding; of a repeated arm's record, with its rate (rated)."""

    @functools.wraps(judge)
    def assess(record: dict) -> Finding:
        finding = judge(record) if record.get("initialized") else not_initialized(record)
        return rated(finding, record.get("trials"))

    return assess


def rated(finding: Finding, trials: dict | None) -> Finding:
    """The finding of a repeated arm (runner.run_trials) says "k of N": how many of the trials run showed the
    defect, and why no more were needed where one settled it, before what the record's own trial showed (the one
    that showed it, or the last that did not)."""
    if trials is None:
        return finding
    rate = f"{trials['shown']} of {trials['run']} trials"
    which = "that trial" if trials["shown"] else "the last"
    settled = f" (no more: {trials['settled']})" if trials.get("settled") else ""
    note = f"shown in {rate}{settled}; {which}: {finding.note}"
    return Finding(finding.shown, note, f"{rate}: {finding.short or finding.note}")


def not_initialized(record: dict) -> Finding:
    """No evidence either way: the server never answered the opening request (initialize, or
    server/discover in 2026-07-28) with a result."""
    if why := blocked_on_client(record):
        return Finding(None, f"no answer to the opening request: {why}", why)
    opening = record.get("opening") or {"method": "initialize", "answer": "no answer"}
    method, answer = opening["method"], opening["answer"]
    short = f"no answer to {method}" if answer == "no answer" else f"{method} refused: {answer}"
    return Finding(None, f"{short} (exit {record.get('exit_code')})", short)


def find_era(server: Server, options: Options) -> dict:
    """The era the checks speak to server: --protocol's, or what server/discover shows on a process
    of its own (eras.era_from_discover), then ended: {protocol, version, chosen_by, evidence}, and
    the probe's process facts."""
    if server.protocol is not None:
        version = server.protocol if eras.is_modern(server.protocol) else None
        return {"protocol": server.protocol, "version": version, "chosen_by": "--protocol", "evidence": "forced"}
    try:
        s = Session(replace(server, protocol=eras.MODERN))
    except (OSError, ValueError) as exc:
        evidence = f"cannot start: {exc}"
        return {"protocol": eras.LEGACY, "version": None, "chosen_by": eras.DISCOVER, "evidence": evidence}
    started = time.monotonic()
    try:
        s.initialize(options)
        answer = s.answer(OPENING_ID)
        waited = round(time.monotonic() - started, 3)
    finally:
        facts = s.end()
    found = eras.era_from_discover(answer, waited)
    if answer is None and facts["ended_by"] == "self":
        found["evidence"] = f"exited {facts['exit_code']} without answering {eras.DISCOVER}"
    probe = {key: facts.get(key) for key in ("pid", "exit_code", "signal", "ended_by")}
    return {**found, "chosen_by": eras.DISCOVER, "probe": {**probe, "answer": s.opening["answer"], "waited_s": waited}}


def blocked_on_client(record: dict) -> str | None:
    """What the server waits on from the client, when the record shows it: its own request left
    unanswered (the probe answers none), or its stdin no longer read."""
    if requests := record.get("stdout", {}).get("server_requests"):
        first = requests[0]
        return f"the server waits on its own request {first['method']} (id {first['id']!r}) to the client"
    if blocked := record.get("write_blocked"):
        return f"the server stopped reading its stdin: {blocked}"
    return None


def exit_after(
    s: Session, trigger: str, bound: float, since: float, prove: Callable[[], dict] | None = None
) -> dict:
    """The record of a trigger (stdin EOF, SIGTERM) given at since: how long the server took to exit, within a
    window of bound s of no progress (or until prove() proved it cannot); busy_after_s when it was still making
    progress at the outer bound."""
    return {"trigger": trigger, **exited(s.wait_exit(bound, since, prove)), "bound_s": bound}


def exited(watched: observe.Watched, again: str = "") -> dict:
    """A wait for the exit as the record keeps it: exit_after_s (None while alive), busy_after_s when the server
    was alive and still making progress at the outer bound, and proven_after_s when it was proven unable to exit
    by itself (Session.idle_on_stdin) before the bound (the names prefixed by again)."""
    facts = {f"{again}exit_after_s": watched.exit_after_s}
    if watched.alive and watched.decided_by == "busy":
        facts[f"{again}busy_after_s"] = watched.decided_after_s
    if watched.alive and watched.decided_by == "proof":
        facts[f"{again}proven_after_s"] = watched.decided_after_s
    return facts


def busy_note(after: float, trigger: str) -> str:
    """What a server alive and still making progress at the outer bound is called: busy, not hung (the window
    rule's outer bound); the check's defect (no exit, no end) is shown by it all the same."""
    return f"still busy {after:.1f} s after {trigger} (never a window without progress)"


def after_signal(s: Session, sig: signal.Signals, bound: float, options: Options) -> dict:
    """sig to the server's pid alone (a host's terminate(), a Ctrl-C), what it did with sig read just before (the
    record's sigterm or sigint: caught, ignored, default; no_handler_ran): how long it took to exit,
    within bound; if it outlived the bound, sig once more (a host signalling again: again_exit_after_s, None while
    alive). In the fast method each wait also ends on the proof that the server, idle on its open stdin, cannot
    exit by itself (Session.idle_on_stdin: proven_after_s), as the bound would have found it alive.

    How the record's exit facts then say it ended (exit code, signal, stderr) is its ending after the signals,
    the probe's own escalation at the arm's end (Child.stop: SIGTERM, then SIGKILL) included: S14 judges it."""
    prove = s.idle_on_stdin if options.method == "fast" else None
    disposition = sample.disposition(s.child.pid, sig)
    sent_at = time.monotonic()
    s.child.signal(sig)
    record = {sig.name.lower(): disposition} | exit_after(s, sig.name, bound, sent_at, prove)
    if record["exit_after_s"] is None:
        sent_at = time.monotonic()
        s.child.signal(sig)
        record |= exited(s.wait_exit(bound, sent_at, prove), "again_")
    return record


def no_handler_ran(record: dict, name: str) -> str | None:
    """Why a trial of a signal's race that did not show the defect needs no other (Probe.settles of S9, S11, S14):
    the signal (name: SIGTERM, SIGINT) had its default action when it was sent and killed the server, or was
    ignored and the server was ended by SIGKILL (its disposition, the record's sigterm or sigint, read from /proc
    just before): no code of the server's ran on any signal it got, so there is no handler to race its stdin
    reader, no shutdown of its runtime to crash. None otherwise (an older record without it, a handler, a server
    that ended otherwise: the signal blocked, an exit of its own, the probe's SIGTERM that it may handle)."""
    disposition = record.get(name.lower())
    if disposition == "ignored" and record.get("signal") == "SIGKILL":
        return f"{name} was ignored and SIGKILL ended it: no code of its ran on a signal"
    if disposition == "default" and record.get("signal") == name:
        return f"{name} had its default action: the kernel ended it, no handler ran"
    return None


# seconds a descendant has to end once the server has: what outliving it means (S5), the same in both methods (part
# of the trigger's observation, not a guess that stands in for a proof)
SURVIVOR_GRACE = 0.5


def descendants(s: Session) -> list[int]:
    """The pids of the server's live descendants (its tree but itself): taken before an ending's trigger."""
    return [p["pid"] for p in s.tree() if p["pid"] != s.child.pid]


def outliving(s: Session, before: list[int]) -> dict:
    """After an ending's trigger (EOF, SIGTERM) and its wait: what of the server's tree outlived it (S5). A server
    still alive gets SIGTERM, then SIGKILL, to its pid alone (Child.stop_process_only), so its descendants still get
    the chance to outlive it; what is alive once it made no progress for SURVIVOR_GRACE after the server ended
    (progress.outlived) has outlived it. Then the whole tree is reaped (reap_tree), and what it still found after
    is recorded too. before: descendants() before the trigger."""
    by_itself = s.child.process.poll() is not None
    if not by_itself:
        s.child.stop_process_only()
    survivors = progress.outlived(lambda: _survivors(s), SURVIVOR_GRACE)
    reaped = s.reap_tree()
    return {
        "descendants_before": before,
        "server_ended_by_itself": by_itself,
        # what the reaping found was alive after the grace too: a scan can miss a pid hopper mid-hop
        "survivors": survivors or reaped,
        "reaped": reaped,
        "alive_after_reap": _survivors(s),
    }


def _survivors(s: Session) -> list[dict]:
    return [
        {"pid": p["pid"], "cmdline": p["cmdline"]}
        for p in s.tree()
        if p["pid"] != s.child.pid and sample.is_live(p["pid"])
    ]


def assess_exit(record: dict) -> Finding:
    """S1, S3, S9: shown when the server was alive after its trigger, a window of bound_s without progress, the
    outer bound (busy_note) or proven unable to exit (proven_after_s); else how it ended, and when."""
    trigger, after = record["trigger"], record["exit_after_s"]
    if after is None:
        alive = f"alive {record['bound_s']:g} s after {trigger}"
        if "busy_after_s" in record:
            alive = busy_note(record["busy_after_s"], trigger)
        if "proven_after_s" in record:
            alive = f"alive, proven idle on stdin {record['proven_after_s']:.2f} s after {trigger}"
        if "again_exit_after_s" in record:
            again = record["again_exit_after_s"]
            second = "alive after a second" if again is None else f"exited {again:.2f} s after a second"
            if "again_busy_after_s" in record:
                second = "still busy after a second"
            if "again_proven_after_s" in record:
                second = "proven idle after a second"
            return Finding(True, f"{alive}; {second}; ended by {record['ended_by']}", alive)
        return Finding(True, f"{alive}, ended by {record['ended_by']}", alive)
    how = f"signal {record['signal']}" if record["signal"] else f"exit {record['exit_code']}"
    return Finding(False, f"ended ({how}) {after:.2f} s after {trigger}", f"{how} {after:.2f} s after {trigger}")

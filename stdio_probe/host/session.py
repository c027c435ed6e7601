"""One host under one check's arm: start it with the scenario server in place of {server}, watch, end, reap.

The host command is split as a shell would; a word that is exactly {server} becomes the scenario
server's argv words, and a word that contains it (sh -c "exec {server}") gets them shell-quoted. The
host runs in a session of its own with the run marker and a marker of its own (Supervisor.spawn_command);
the scenario server carries the run marker and a scenario marker (spawn.SCENARIO_MARKER) whatever the host
forwards, so both trees are found in /proc and reaped at the end of every arm.

A host "hangs" only on proof or after the window (the rule of the cases): in the fast method,
PROOF_SAMPLES readings PROOF_GAP apart in which no thread of any host process can leave its wait but by
the host's or the scenario server's processes (hang.prove_waiting_forever) and none of the scenario
server's tree (our own code, which keeps no timer) can either (hang.wake_source, the same rule), no
thread of either having run in between; in the window method, a whole window after the check's trigger.
Every window here counts only time in which the host made no progress (HostRun.clock, method.md "The
window rule"): a host tearing down on a loaded machine is slow, not hung; one still making progress at
the outer bound is "busy" (stuck_note), never called a hang.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from stdio_probe.core import hang, progress, sample, spawn
from stdio_probe.core.model import Finding, Host, Options
from stdio_probe.fixtures.fixture_events import EventReader

SERVER_WORD = "{server}"
SCENARIO = spawn.FIXTURES / "scenario_server.py"
POLL = 0.02
PROOF_SAMPLES = 3
PROOF_GAP = 0.1
SURVIVOR_GRACE = 1.0  # seconds without progress after the host's exit by which nothing of the server's tree may live
IDLE_STRETCH = 1.0  # the host's stretches without progress the record keeps (idle_stretches): this long or longer
REAP_BOUND = 1.0
START_BOUND = 10.0  # seconds a host may use no CPU before reaching a check's trigger: slow is not stuck
START_CAP = 180.0  # seconds a host has to reach a check's trigger, busy or not
# the bug arm of a check whose hang most hosts show (H5, H6, H11: a dead, noisy or mute server), decided by the
# window where no proof holds: queued first (Probe.slow_arms), so that a host's wait ends with its longest arm
HANG_ARMS = ("bug",)


def server_words(events: str, tag: str, scenario: str) -> list[str]:
    """The argv words that stand for {server}: the probe's interpreter running the scenario server."""
    return [
        sys.executable,
        str(SCENARIO),
        "--events",
        events,
        "--run",
        spawn.RUN_ID,
        "--tag",
        tag,
        "--scenario",
        scenario or "none",
    ]


def host_argv(command: str, words: list[str]) -> list[str]:
    """The host's argv with {server} replaced; ValueError when the command has no {server} word."""
    argv, found = [], False
    for word in shlex.split(command):
        if word == SERVER_WORD:
            argv += words
            found = True
        elif SERVER_WORD in word:
            argv.append(word.replace(SERVER_WORD, shlex.join(words)))
            found = True
        else:
            argv.append(word)
    if not found:
        raise ValueError(f"no {SERVER_WORD} word in {command!r}")
    return argv


class HostRun:
    """A started host and its scenario server's timeline (the events file), watched until the arm is done."""

    def __init__(self, host: Host, scenario: str) -> None:
        self.host, self.scenario = host, scenario
        self._folder = tempfile.TemporaryDirectory(prefix="probe-host-", dir=spawn.current().run_folder())
        self.events_path = str(Path(self._folder.name) / "server.events")
        self._events = EventReader(self.events_path)
        self.tag = uuid.uuid4().hex
        argv = host_argv(host.command, server_words(self.events_path, self.tag, scenario))
        self.child, self.host_id = spawn.current().spawn_command(shlex.join(argv), host.env.values, host.env.inherit)
        self.started = self.child.started
        # the host's stdin stays open and empty, as a terminal nobody types into: a host that takes its own
        # stdin's EOF for "quit" would otherwise end before the contract; closed when the arm ends
        self.stdout = spawn.StderrRing(self.child.process.stdout, self.child.supervisor)
        self.host_exit_t: float | None = None
        self.server_gone_t: dict[int, float] = {}
        self.peak_kib = 0
        self.server_peak_kib = 0  # the highest peak read of a scenario server, while the host's peak is tracked
        self.track_memory = False  # H8: the host tree's peak memory, read on every poll (a /proc scan)
        # the host's tree (the scenario server's included) and its pipes: stderr, stdout, the messages it sent
        self.clock = progress.Clock(progress.tree(self.child.pid), self.moved)

    def moved(self) -> int:
        """Bytes the host moved on its pipes: its stderr and stdout, and what the scenario server logged of the
        messages it got (the events file's size)."""
        try:
            logged = os.stat(self.events_path).st_size
        except OSError:  # not written yet
            logged = 0
        return self.child.moved() + self.stdout.total + logged

    def events(self) -> list[dict]:
        """Every event the scenario servers logged so far, each read once (EventReader: the waits ask every 20 ms)."""
        return self._events.read()

    def server_pids(self) -> list[int]:
        """Every live process of the scenario server's tree (its marker survives re-parenting)."""
        return [p["pid"] for p in sample.marked_processes(spawn.SCENARIO_MARKER, self.tag, argv=True)]

    def host_pids(self) -> list[int]:
        """The host's live processes: its marker and its session, the scenario server's tree left out."""
        found = {p["pid"] for p in sample.marked_processes(spawn.SERVER_MARKER, self.host_id)}
        found |= {p["pid"] for p in sample.session_members(self.child.pid)}
        return sorted(found - set(self.server_pids()) - {os.getpid()})

    def host_exited(self) -> bool:
        if self.host_exit_t is None and self.track_memory:
            self._exit_peak()
        if self.host_exit_t is None and self.child.process.poll() is not None:
            self.host_exit_t = time.monotonic()
        return self.host_exit_t is not None

    def _exit_peak(self) -> None:
        """H8: the host exited and not yet reaped, the kernel's peak for it (sample.exit_peak_kib), which the
        /proc readings miss when the host grows and exits between two of them (a loaded machine spaces them). The
        kernel's figure counts the children the host reaped, its servers among them: it is taken only above every
        peak read of a server, so it is that of the host or of a process of its tree."""
        pidfd = self.child.pidfd
        kib = None if pidfd is None else pidfd.use(sample.exit_peak_kib)
        if kib is not None and kib > self.server_peak_kib:
            self.peak_kib = max(self.peak_kib, kib)

    def _look(self) -> None:
        """One poll: the host's exit, the scenario servers seen gone, the host tree's peak memory."""
        self.host_exited()
        now, servers = time.monotonic(), set()
        for event in self.events():
            if event["event"] in ("start", "real_server", "holder"):
                pid = event.get("holder", event["pid"])
                servers.add(pid)
                if pid not in self.server_gone_t and not sample.is_live(pid):
                    self.server_gone_t[pid] = now
        if self.track_memory and self.host_exit_t is None:  # the host's tree from the kernel's children lists
            # a fork not yet exec'd (the server on its way) is a copy of its parent's pages: not the host's growth
            tree = {self.child.pid, *sample.descendants(self.child.pid)} - servers
            self.peak_kib = max(self.peak_kib, sum(_hwm_kib(pid) for pid in tree if not sample.unexeced_fork(pid)))
            self.server_peak_kib = max([self.server_peak_kib, *(_hwm_kib(pid) for pid in servers)])

    def idle_too_long(self, since: float) -> bool:
        """Whether the host made no progress for START_BOUND s (clock), or START_CAP s have passed since since:
        the bound of a wait for a check's trigger."""
        return self.clock.idle_s(since) > START_BOUND or time.monotonic() - since > START_CAP

    def wait_for_trigger(self, done) -> bool:
        """Whether done(events) came true before the host went idle too long (idle_too_long); the wait ends
        early once the host has exited."""
        since = time.monotonic()
        while not self.idle_too_long(since):
            self._look()
            if done(self.events()):
                return True
            if self.host_exited():
                return done(self.events())
            time.sleep(POLL)
        return False

    def wait_host(self, options: Options, trigger, bound: float | None = None, prove_after=None) -> dict:
        """Wait for the host to exit by itself, after trigger(events) -> its monotonic time (None until then).

        Returns {"exited": True}, {"stuck": {"decided_by": "proof"|"window"|"busy", "after_s", ...}} (in the fast
        method stuck on proof; in the window method, or when no proof comes, once the host made no progress for
        bound s after the trigger (idle_s: how long), or "busy" when it still made progress OUTER_WINDOWS bounds
        after it), or {"no_trigger": True} when the host had not reached the trigger before idle_too_long (no
        evidence). prove_after (default: trigger) is when proofs may begin: H8 proves a host that stops reading
        its answer stuck from the call on, and gives one that works through it the window from the answer's
        last byte.
        """
        bound = options.window if bound is None else bound
        waiting_since = time.monotonic()
        last_proof = 0.0
        while True:
            self._look()
            now = time.monotonic()
            if self.host_exited():
                return {"exited": True}
            events = self.events()
            at, proving = trigger(events), (prove_after or trigger)(events)
            if proving is not None and options.method == "fast" and now - last_proof > PROOF_GAP:
                last_proof = now
                proof = self.prove_stuck()
                if proof["proven"]:
                    after = round(time.monotonic() - proving, 3)
                    return {"stuck": {"decided_by": "proof", "after_s": after, "proof": proof}}
            if at is None and self.idle_too_long(waiting_since):
                return {"no_trigger": True}
            if at is not None and (over := self.clock.over(at, bound)) is not None:
                idle = round(self.clock.idle_s(at), 3)
                decided = "window" if over == "idle" else "busy"
                return {"stuck": {"decided_by": decided, "after_s": round(now - at, 3), "idle_s": idle}}
            time.sleep(POLL)

    def prove_stuck(self) -> dict:
        """PROOF_SAMPLES readings PROOF_GAP apart: host and scenario server all asleep with no timer, none ran.
        Proven, it keeps the last sample's readings of each process (hang.readings: what each thread waits on,
        the row that ruled out each wake source)."""
        first, found = None, {}
        for i in range(PROOF_SAMPLES):
            if i:
                time.sleep(PROOF_GAP)
            hosts, servers = self.host_pids(), self.server_pids()
            if self.host_exited():
                return {"proven": False, "why_not": "the host exited"}
            reading = {}
            for pid in hosts:
                # the wake-source rule: nothing outside the host's and the scenario server's processes (its
                # marked tree, its children, a signal or timer) can wake it
                proof = hang.prove_waiting_forever(pid, (spawn.SERVER_MARKER, self.host_id), [*hosts, *servers])
                if not proof["proven"]:
                    return {"proven": False, "why_not": f"host process {pid}: {proof['why_not']}"}
                reading[pid], found[pid] = proof["threads"], proof["readings"]
            for pid in servers:
                # our own code, which keeps no timer: its waits go by the same rule, on what the host and it hold
                threads = sample.threads(pid)
                why, waits = hang.wake_source(pid, threads, [*hosts, *servers])
                if why is not None:
                    return {"proven": False, "why_not": f"server process {pid}: {why}"}
                reading[pid], found[pid] = threads, hang.readings(waits, {})
            if first is None:
                first = reading
            elif _switches(reading) != _switches(first):
                return {"proven": False, "why_not": "a process ran or came or went during the proof"}
        return {
            "proven": True,
            "why_not": None,
            "host_pids": sorted(set(first) - set(self.server_pids())),
            "server_pids": self.server_pids(),
            "readings": found,
        }

    def kill_host(self) -> float:
        """SIGKILL to the host process alone (H10, a stuck host in H4): what it set up for its death is all that
        acts. Its record says the probe ended it (ended_by SIGKILL), not that it exited by itself."""
        self.child.signal(signal.SIGKILL)
        self.child.process.wait()
        self.child.ended_by = signal.SIGKILL.name
        self.host_exited()
        return time.monotonic()

    def survivors(self) -> list[dict]:
        """The scenario server's tree still alive: pid, parent, whether the probe adopted it, command line."""
        return [
            {"pid": pid, "ppid": ppid, "adopted": ppid == os.getpid(), "cmdline": sample.cmdline(pid)}
            for pid, ppid in ((pid, sample.parent_pid(pid)) for pid in self.server_pids())
        ]

    def end(self) -> dict:
        """Stop the host (its group: SIGTERM, SIGKILL), reap both trees; the host's facts and the timeline.

        events are what the scenario server logged while the arm observed; what it logged once the probe
        began ending things (its own signals, EOF) is events_at_end, never evidence about the host."""
        self.host_exited()
        observed_until = time.monotonic()
        with suppress(OSError):
            self.child.process.stdin.close()
        self.child.stop()
        reaped = [
            *spawn.reap_marked(spawn.SERVER_MARKER, self.host_id),
            *spawn.reap_marked(spawn.SCENARIO_MARKER, self.tag, argv=True),
        ]
        self.child.signal_group(signal.SIGKILL)
        deadline = time.monotonic() + REAP_BOUND
        while any(sample.is_live(p["pid"]) for p in reaped) and time.monotonic() < deadline:
            time.sleep(0.01)
        facts = self.child.record()
        events = self.events()
        self._folder.cleanup()
        out = self.stdout.read().decode("utf-8", "replace")
        return {
            "host": facts,
            "host_stdout": out[-spawn.STDERR_LIMIT :],
            "host_exited_by_itself": facts["ended_by"] == "self",
            "host_exit_t": self.host_exit_t,
            "host_peak_kib": self.peak_kib,
            "started_t": self.started,
            "events": [e for e in events if e["t"] < observed_until],
            "events_at_end": [e for e in events if e["t"] >= observed_until],
            "reaped_at_end": [{"pid": p["pid"], "cmdline": p["cmdline"]} for p in reaped],
            "idle_stretches": self.clock.idle_stretches(IDLE_STRETCH),
        }


def _hwm_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def _switches(reading: dict[int, list[dict]]) -> dict:
    return {
        pid: [(t["tid"], t["switches"], t["syscall"].get("nr")) for t in threads] for pid, threads in reading.items()
    }


# ---- the timeline: what the scenario server logged


def first(events: list[dict], event: str, **match: object) -> dict | None:
    return next((e for e in events if e["event"] == event and all(e.get(k) == v for k, v in match.items())), None)


def methods(events: list[dict], launch: int | None = None) -> list[str]:
    return [e["method"] for e in events if e["event"] == "message" and (launch is None or e["launch"] == launch)]


def launches(events: list[dict]) -> list[dict]:
    """Each server the host started, in the order of their starts: launch, pid, t (its start), pids (its own and
    those it logged starting: a wrapper's child, a background child, a holder), ended (what began its end: the
    host's "stdin_eof" or a signal's name, or "crash": an exit of its own, non-zero, before either; None while it
    served) and ended_t. A server SIGKILLed unwarned logs no end: it counts as serving until the record's end."""
    found = []
    for start in (e for e in events if e["event"] == "start"):
        own = [e for e in events if e.get("launch") == start["launch"]]
        pids = {start["pid"], *(e["pid"] for e in own if e["event"] == "real_server")}
        pids |= {e[key] for e in own for key in ("child", "holder") if isinstance(e.get(key), int)}
        end = next((e for e in own if e["event"] in ("stdin_eof", "signal", "exit")), None)
        ended = None if end is None else end.get("name") or end["event"]
        if ended == "exit":
            ended = "crash" if end["code"] else "exit"
        found.append(
            {
                "launch": start["launch"],
                "pid": start["pid"],
                "t": start["t"],
                "pids": sorted(pids),
                "ended": ended,
                "ended_t": None if end is None else end["t"],
            }
        )
    return found


def server_shape(events: list[dict]) -> str:
    """How the host used its servers: "several at once" when one started while one before it still served
    (nothing of its end logged yet), "a server per operation" when one started after the host had ended the
    one before it (its stdin's EOF or a signal: a new server for a new operation, no crash before it), else
    "one server" (relaunched after a crash, or not)."""
    servers, shape = launches(events), "one server"
    for n, later in enumerate(servers[1:], 1):
        if any(s["ended_t"] is None or s["ended_t"] > later["t"] for s in servers[:n]):
            return "several at once"
        if servers[n - 1]["ended"] != "crash":
            shape = "a server per operation"
    return shape


def named(server: dict) -> str:
    """One server of launches in a note: which launch, its pid."""
    return f"launch {server['launch']} (pid {server['pid']})"


def per_server(judge: Callable[[dict], Finding]) -> Callable[[dict], Finding]:
    """judge applied to each server's own part of a record where the host started more than one (a server per
    operation, several at once, relaunches): its events, survivors and gone times (own_part). The first server
    that shows the defect decides, named; else the first without evidence; else every server's note, each
    named. A record with one server, or with a survivor no server logged (a daemon of the host's own that
    carries the server's words), is judged whole: there is no other server to tell it from."""

    def each(record: dict) -> Finding:
        servers = launches(record["events"])
        logged = {pid for server in servers for pid in server["pids"]}
        if len(servers) < 2 or any(s["pid"] not in logged for s in record.get("survivors", ())):
            return judge(record)
        found = [(server, judge(own_part(record, server))) for server in servers]
        for wanted in (True, None):
            for server, finding in found:
                if finding.shown is wanted:
                    return Finding(wanted, f"{named(server)}: {finding.note}", f"{named(server)}: {finding.brief}")
        notes = "; ".join(f"{named(server)}: {finding.note}" for server, finding in found)
        return Finding(False, notes, f"{len(found)} servers, {named(found[-1][0])}: {found[-1][1].brief}")

    return each


def own_part(record: dict, server: dict) -> dict:
    """The record as it concerns one server of launches: its launch's events, its pids' survivors and gone times."""
    part = {**record, "events": [e for e in record["events"] if e.get("launch") == server["launch"]]}
    if "survivors" in record:
        part["survivors"] = [s for s in record["survivors"] if s["pid"] in server["pids"]]
    if "server_gone_t" in record:
        part["server_gone_t"] = {pid: t for pid, t in record["server_gone_t"].items() if int(pid) in server["pids"]}
    return part


def precondition(record: dict, through: str = "tools/call") -> Finding | None:
    """No evidence (a Finding of None) when the host did not do the contract through that step, or never let
    the check's trigger happen; None when the arm can be judged."""
    if (missing := contract_reached(record["events"], through)) is not None:
        return Finding(None, f"{missing} ({_host_end(record)})", missing)
    if record.get("no_trigger"):
        return Finding(
            None,
            f"the check's trigger never happened (the host idle {START_BOUND:g} s, or {START_CAP:g} s)",
            "no trigger",
        )
    return None


def contract_reached(events: list[dict], through: str = "tools/call") -> str | None:
    """What the host did not do of the contract up to through (start, connect, tools/list, tools/call), or None."""
    if first(events, "start") is None:
        return "the host never started the server"
    seen = methods(events)
    if not {"initialize", "server/discover"} & set(seen) and not any(m for m in seen if m != "ping"):
        return "the host never connected (no initialize, no server/discover)"
    steps = ["tools/list", "tools/call"]
    for step in steps[: steps.index(through) + 1]:
        if step not in seen:
            return f"the host never sent {step}"
    return None


def era(events: list[dict]) -> str | None:
    """The protocol era the host spoke: legacy (initialize) or 2026-07-28 (server/discover, _meta)."""
    return next((e["era"] for e in events if e["event"] == "message" and e.get("era")), None)


def assess_control(record: dict) -> Finding:
    """The control arm (the well-behaved server): the host must do the whole contract and exit by itself."""
    events = record["events"]
    if (missing := contract_reached(events)) is not None:
        return Finding(None, f"control: {missing} ({_host_end(record)})", missing)
    if not record["host_exited_by_itself"]:
        return Finding(None, f"control: the host did not exit by itself ({_host_end(record)})", "host did not exit")
    return Finding(
        False,
        f"well-behaved server: contract done ({era(events)} era), host exit {record['host']['exit_code']}",
        "contract done",
    )


def _host_end(record: dict) -> str:
    host = record["host"]
    how = f"exit {host['exit_code']}" if host["ended_by"] == "self" else f"ended by the probe ({host['ended_by']})"
    return f"host {how}"


def run(host: Host, scenario: str, body) -> dict:
    """Start the host with the scenario, run body(run) for the arm's own facts, end it whatever happens."""
    try:
        started = HostRun(host, scenario)
    except (OSError, ValueError) as exc:
        return {"error": f"cannot start {host.command!r}: {exc}"}
    try:
        facts = body(started)
    finally:
        ended = started.end()
    return {"scenario": scenario, **ended, **facts}


def stuck_note(stuck: dict, trigger: str) -> str:
    """A host that did not exit, by how wait_host decided: proof, a window without progress, busy at the outer
    bound (not a hang: the check's defect, no exit, is shown by it all the same)."""
    if stuck["decided_by"] == "proof":
        return f"host proven waiting forever {stuck['after_s']:.2f} s after {trigger}"
    if stuck["decided_by"] == "busy":
        return f"host still busy {stuck['after_s']:.1f} s after {trigger} (never a window without progress)"
    idle = f", idle the last {stuck['idle_s']:.1f} s" if "idle_s" in stuck else ""  # stored records before it
    return f"host still running {stuck['after_s']:.1f} s after {trigger}{idle} (window)"


def at(event: str, **match: object):
    """A trigger for wait_host: the monotonic time of the first such event, None until it is logged."""

    def trigger(events: list[dict]) -> float | None:
        found = first(events, event, **match)
        return None if found is None else found["t"]

    return trigger


def shutdown_facts(run: HostRun, waited: dict) -> dict:
    """What a check of the host's shutdown reads: the wait's outcome and, once the host is gone (by itself, or
    killed), what of the server's tree is still alive once it made no progress for SURVIVOR_GRACE after the
    host's exit (progress.outlived; each with its parent)."""
    survivors: list[dict] = []
    if run.host_exit_t is not None:  # exited, or killed by the probe (H4's stuck host)
        survivors = progress.outlived(run.survivors, SURVIVOR_GRACE)
    return {**waited, "survivors": survivors, "server_gone_t": {str(k): v for k, v in run.server_gone_t.items()}}


def signals(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] == "signal"]


def run_control(host: Host, options: Options) -> dict:
    """The control arm: the well-behaved server, the whole contract; the host must exit by itself."""
    return {"arm": "control", **run(host, "", shutdown(options))}


def arm(host: Host, options: Options, arm_name: str, scenario: str, body) -> dict:
    """A check's arm: the control, or its scenario run through body."""
    if arm_name == "control":
        return run_control(host, options)
    return {"arm": arm_name, **run(host, scenario, body)}


def shutdown(options: Options, trigger=None, prove_after=None):
    """The body of a shutdown check: wait for the host after trigger (default: the answer), then look at what
    it left."""
    trigger = trigger or at("answered")
    return lambda r: {
        "bound_s": options.window,
        **shutdown_facts(r, r.wait_host(options, trigger, prove_after=prove_after)),
    }


# ---- a check's shape: its run_arm and its assess


def shutdown_arm(scenario: str, trigger=None) -> Callable[[str, Host, Options], dict]:
    """The run_arm of a check whose bug arm is its scenario watched by shutdown from trigger (default: the
    answer)."""

    def run_arm(arm_name: str, host: Host, options: Options) -> dict:
        return arm(host, options, arm_name, scenario, shutdown(options, trigger))

    return run_arm


def judged(judge: Callable[[dict], Finding], through: str | None = "tools/call") -> Callable[[dict], Finding]:
    """A check's assess: the shared control arm by assess_control; a bug arm whose host did not do the contract
    through that step, or never let the trigger happen, is no evidence (precondition); judge says the rest.
    through None: judge reads the contract itself (H7 looks for a deadlock first, H10 for a kill)."""

    def assess(record: dict) -> Finding:
        if record.get("arm") == "control":
            return assess_control(record)
        if through is not None and (undecided := precondition(record, through)) is not None:
            return undecided
        return judge(record)

    return assess

"""The runner: one loop (run_subject) over any kind of subject, and a Subject per kind: Sdks (the cases L1-L13),
Servers (the server checks), Hosts (the host checks).

A Subject is the whole contract of a run: its plan (the jobs, in the order the pool takes them), the live view's
rows (named from that plan, so the view and the run never disagree), a job run into its arm's record, and the
runs decided from the records. The loop, the pool, the signal handling and the arm's timing live here once.

Each run is held by a spawn.Supervisor, the owner of its processes (run_subject): the caller's, or one of the
runner's own, created at the run's start and ended at its end (spawn's docstring says why).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import ClassVar, NamedTuple, Protocol, Self, TypeVar

from stdio_probe.core import eras, spawn
from stdio_probe.core.decide import NO_CONTRACT, NO_HOST_ARM, decide, decide_check, mitigation, unready
from stdio_probe.core.model import Host, Options, Probe, Sdk, Server
from stdio_probe.core.outcome import Outcome
from stdio_probe.host import session as host_session
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report.record import ArmRecord, Run, Trials, make_run
from stdio_probe.sdk.cases import ARMS, CASES
from stdio_probe.server import session
from stdio_probe.server.checks import CHECKS

FAST_PARALLEL_ARMS = 12
POLL = 0.1  # seconds between the main thread's looks at the arms (a signal waits no longer)
FORK_AHEAD = 2  # SDKs whose fork servers preload while the arms of an earlier one run

# on_arm(sdk_spec, case_id, arm, status, note): status is "running" or "done"
ArmListener = Callable[[str, str, str, str, str], None]


def unwatched(label: str, probe: str, arm: str, state: str, note: str) -> None:
    """What an in-process run nobody watches (a test, a table, a bench) does with each arm's progress: nothing."""
Row = tuple[str, str, str]  # a row of the live view: the subject's label, the probe's id, the arm
Key = TypeVar("Key", bound=Hashable)  # what run_trials names each reader of an arm by (the runner: its Job)
Item = TypeVar("Item")  # what map_cut_short calls its function on
Result = TypeVar("Result")
Supervised = spawn.Supervisor | None  # a run's supervisor: the caller's, or None for one of the runner's own


class Job(NamedTuple):
    """One arm of one probe on one subject: the subject's place in its list, the probe's id, the arm; for a rerun
    with no other arm running (Subject.reruns), the trials it may take (rerun; 0: not a rerun)."""

    subject: int
    probe: str
    arm: str
    rerun: int = 0


@dataclass(frozen=True)
class Kind:
    """A kind of subject: the key of its subject in a run (results.json), its probes, and what --only
    selects among them (named in an error)."""

    key: str
    probes: dict[str, Probe]
    what: str


SDK = Kind("sdk", CASES, "case")
SERVER = Kind("server", CHECKS, "check (with --server)")
HOST = Kind("host", HOST_CHECKS, "check (with --host)")
KINDS = {kind.key: kind for kind in (SDK, SERVER, HOST)}


class Subject(Protocol):
    """What the runner and the command line know of the subjects of one run and the probes they run under.

    plan() lists the jobs and rows() names the live view's rows from it (with any row of its own that ready()
    shows). ready() makes the subjects ready for their jobs and yields them ready (what a kind needs while its
    arms run, closed when they end); run() runs one job into its arm's record, and that of any other job that reads
    the same arm (Servers: a shared arm); reruns() lists, from the records
    of arms that ran side by side, the jobs to run again one at a time; runs() decides each probe on each
    subject from the records. ready() and run() act under the run's supervisor, which owns every process
    they start.
    """

    kind: ClassVar[Kind]
    probe_ids: list[str]

    def plan(self) -> list[Job]: ...

    def rows(self) -> list[Row]: ...

    def ready(
        self, supervisor: spawn.Supervisor, options: Options, on_arm: ArmListener
    ) -> AbstractContextManager[Self]: ...

    def run(
        self, supervisor: spawn.Supervisor, job: Job, options: Options, on_arm: ArmListener
    ) -> dict[Job, ArmRecord]: ...

    def reruns(self, records: dict[Job, ArmRecord]) -> list[Job]: ...

    def runs(self, records: dict[Job, ArmRecord]) -> list[Run]: ...


def run_subject(
    subject: Subject, options: Options, on_arm: ArmListener, supervisor: Supervised = None
) -> list[Run]:
    """Every job of the subject's plan on one pool, then its runs: the one loop of every kind of subject, so
    no kind plans, runs or decides apart from the others.

    The run is held by supervisor: the caller's, left to the caller to end (the command line reads at its end
    how many processes outlived the arms), or, when None, one of the runner's own for this run, ended with it."""
    held = contextlib.nullcontext(supervisor) if supervisor is not None else spawn.Supervisor()
    with held as run, subject.ready(run, options, on_arm) as ready:

        def arm(job: Job) -> dict[Job, ArmRecord]:
            return ready.run(run, job, options, on_arm)

        records = run_jobs(arm, ready.plan(), workers(options), run)
        if workers(options) > 1:  # the arms ran side by side: the reruns, one at a time, that may contradict them
            records |= run_jobs(arm, ready.reruns(records), 1, run)
    return ready.runs(records)


def workers(options: Options) -> int:
    """Arms at once: FAST_PARALLEL_ARMS in the fast method; one at a time in the window method, as the article."""
    return FAST_PARALLEL_ARMS if options.method == "fast" else 1


def plan_rows(labels: list[str], jobs: list[Job]) -> list[Row]:
    """The live view's row of each job (labels: the subjects' labels, in order): what every kind's rows are made of."""
    return [(labels[job.subject], job.probe, job.arm) for job in jobs]


def run_arm(
    supervisor: spawn.Supervisor,
    label: str,
    arm: str,
    probes: Mapping[Job, Probe],
    run: Callable[[], dict],
    on_arm: ArmListener,
) -> dict[Job, ArmRecord]:
    """One arm of any probe on any subject (run() makes its record, under the run's supervisor), read by probes:
    the job's own probe first (named in the live view), then any other that reads the same arm (Servers: a
    shared arm, Probe.same_arms), each given its record (run_trials). A failure of the probe itself becomes the
    arm's error, never a lost run, and so does a record the probe cannot read."""
    own = next(iter(probes))
    on_arm(label, probes[own].id, arm, "running", "")
    started = time.time()
    try:
        records = run_trials(supervisor, probes, run)
    except Exception as exc:
        records = {job: _failure(exc) for job in probes}
    took = round(time.time() - started, 3)
    for job, probe in probes.items():
        record = records[job]
        record["started_at"], record["duration_s"] = started, took
        try:
            note = probe.note(record)
        except Exception as exc:
            record |= _failure(exc, "cannot assess: ")
            note = record["error"]
        if job == own and not supervisor.stopping():  # an arm cut short is not done: no progress line after a signal
            on_arm(label, probe.id, arm, "done", note)
    return records


def run_trials(
    supervisor: spawn.Supervisor, probes: Mapping[Key, Probe], run: Callable[[], dict]
) -> dict[Key, ArmRecord]:
    """run() once; where a probe reading it (probes: each a reader of the same arm) has a defect that can hide in
    one run (probe.trials > 1), again, until a trial shows that probe's defect, or gives no evidence (an error,
    not_applicable, a finding of None: no trial after it could make the rate stand), or settles it
    (probe.settles: its outcome is not one the race hides the defect behind), or probe.trials have run; as long
    as any reader is left undecided. Each probe keeps a copy of the record of the trial that decided it (the first,
    for a probe of one trial: no reader's error or note lands on another's), with its own trials {run, shown} and
    settled (why the trials ended early without the defect) where it repeats the arm: session.opened says "k of
    N" from it. A probe that cannot read a trial is decided on it, with the error (the others go on). Each
    trial's processes are reaped by the trial itself, and their fds closed before the next starts (each trial in
    an arm_scope of the run's supervisor)."""
    decided: dict[Key, ArmRecord] = {}
    tried = 0
    while len(decided) < len(probes):
        with supervisor.arm_scope():
            record = run()
        tried += 1
        for key, probe in probes.items():
            if key not in decided and (kept := _decided(probe, record, tried)) is not None:
                decided[key] = kept
    return {key: decided[key] for key in probes}


def _decided(probe: Probe, record: ArmRecord, tried: int) -> ArmRecord | None:
    """The record a probe keeps once trial number tried (record) decides it, a copy, with its rate where it repeats
    the arm; None while it needs another trial."""
    if probe.trials == 1:
        return ArmRecord(record)
    try:
        shown, settled = _shown(probe, record), None
        if shown is False and tried < probe.trials:
            settled = probe.settles(record) if probe.settles is not None else None
            if not settled:
                return None
    except Exception as exc:
        return {**record, **_failure(exc, "cannot assess: "), "trials": {"run": tried, "shown": 0}}
    trials: Trials = {"run": tried, "shown": int(shown is True)}
    if settled:
        trials["settled"] = settled
    return {**record, "trials": trials}


def _failure(exc: Exception, what: str = "") -> ArmRecord:
    """The error an arm or a probe's reading of it failed with (what: its prefix), and where, as a record keeps it."""
    return {"error": f"{what}{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=5)}


def _shown(probe: Probe, record: ArmRecord) -> bool | None:
    """What a trial's record shows: None where it has no evidence (assess is never asked about such a record)."""
    if record.get("error") or record.get("not_applicable"):
        return None
    return probe.assess(record).shown


def run_jobs(
    run: Callable[[Job], dict[Job, ArmRecord]], jobs: list[Job], workers: int, supervisor: spawn.Supervisor
) -> dict[Job, ArmRecord]:
    """run(job) for every job (map_cut_short); job -> its record (and those of the jobs each read for others)."""
    return {read: record for found in map_cut_short(run, jobs, workers, supervisor) for read, record in found.items()}


def map_cut_short(
    function: Callable[[Item], Result], items: list[Item], workers: int, supervisor: spawn.Supervisor
) -> list[Result]:
    """function(item) for every item on a pool of workers, in order.

    The main thread waits in short polls, so a signal's exception is raised at once. On it (Ctrl-C,
    SIGTERM) the run is cut short: the supervisor's stop() kills every server and fixture, which ends the
    waits of the running calls, no further call starts, and the pool is left without joining its threads.
    """
    pool = ThreadPoolExecutor(max_workers=workers)
    futures = [pool.submit(function, item) for item in items]
    try:
        while wait(futures, timeout=POLL).not_done:
            pass
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        supervisor.stop()
        raise
    pool.shutdown()
    return [future.result() for future in futures]


@dataclass(frozen=True)
class Sdks:
    """The cases on SDKs. The fast method runs arms concurrently and forks fixtures from a warm fork server per
    SDK (warm, set by ready()); the window method runs them one at a time, each a fresh exec, as the article did."""

    kind: ClassVar[Kind] = SDK
    sdks: list[Sdk]
    probe_ids: list[str]
    warm: spawn.ForkServers | None = None

    def arms(self) -> list[tuple[str, str]]:
        """One SDK's (case, arm) pairs in the order they run: every case's bug, control and mitigated arms first,
        then the extra arms, so no case's verdict waits for them; a case's slow arms (long fixed waits) before
        all others, so they do not end the run."""
        arms = [(case_id, arm) for case_id in self.probe_ids for arm in CASES[case_id].arms if arm in ARMS]
        arms += [(case_id, arm) for case_id in self.probe_ids for arm in CASES[case_id].arms if arm not in ARMS]
        return sorted(arms, key=lambda job: job[1] not in CASES[job[0]].slow_arms)

    def plan(self) -> list[Job]:
        """One SDK after another (the pool takes jobs in this order), so its fork server is needed only so long."""
        return [Job(i, case_id, arm) for i in range(len(self.sdks)) for case_id, arm in self.arms()]

    def rows(self) -> list[Row]:
        return plan_rows([sdk.spec for sdk in self.sdks], self.plan())

    @contextlib.contextmanager
    def ready(self, supervisor: spawn.Supervisor, options: Options, on_arm: ArmListener) -> Iterator[Sdks]:
        """In the fast method, the SDKs' fork servers (the run's): each started FORK_AHEAD SDKs before its arms
        and closed after them, every one still open closed when the run ends (cut short too)."""
        if options.method != "fast":
            yield self
            return
        interpreters = [(sdk.python, sdk.env) for sdk in self.sdks]
        warm = spawn.ForkServers(supervisor, interpreters, len(self.arms()), FORK_AHEAD)
        try:
            yield replace(self, warm=warm)
        finally:
            warm.close()

    def run(
        self, supervisor: spawn.Supervisor, job: Job, options: Options, on_arm: ArmListener
    ) -> dict[Job, ArmRecord]:
        """The job's arm, inside its SDK's turn of the fork servers (fast method)."""
        sdk, case = self.sdks[job.subject], CASES[job.probe]
        try:
            if self.warm is not None:
                self.warm.begin(job.subject)
            return run_arm(supervisor, sdk.spec, job.arm, {job: case}, lambda: case.run(job.arm, sdk, options), on_arm)
        finally:
            if self.warm is not None:
                self.warm.end(job.subject)

    def reruns(self, records: dict[Job, ArmRecord]) -> list[Job]:
        """None: the probe's own fixtures share nothing between arms (method.md, "Arms side by side")."""
        return []

    def runs(self, records: dict[Job, ArmRecord]) -> list[Run]:
        """Each case's verdict and host-contract mitigation per SDK, from its arms."""
        runs = []
        for i, sdk in enumerate(self.sdks):
            for case_id in self.probe_ids:
                case = CASES[case_id]
                arms = {arm: records[Job(i, case_id, arm)] for arm in case.arms}
                verdict = decide(case, arms)
                held = mitigation(case, arms)
                runs.append(make_run(case_id, self.kind.key, {"spec": sdk.spec, **sdk.facts}, verdict, held, arms))
        return runs


def unavailable(spec: str, facts: dict, case_ids: list[str], reason: str) -> list[Run]:
    """The runs of an SDK that could not be made ready: an error verdict per case, no arms."""
    sdk = {"spec": spec, **facts}
    decided, held = unready(reason)
    return [
        make_run(case_id, SDK.key, sdk, decided, held, {})
        for case_id in case_ids
    ]


ERA_ROW = ("era", eras.DISCOVER)  # the live view's row of a server's era probe: (case, arm)


@dataclass(frozen=True)
class Servers:
    """The server checks on servers, each spoken to in its era (eras, found by ready()). A server sharing no era
    with the probe gets not_applicable arms. Every start of a server is in a sandbox of its own (session.Session),
    so one server's arms run side by side, unless it is declared --sequential-arms (turns): what the sandbox
    leaves shared (a port, a path on its command line) could let one arm's evidence change another's. That is
    looked for (reruns): a check found reproduced or inconclusive side by side is run again one at a time, and
    where the two disagree the run is the one at a time's, saying so (side_by_side)."""

    kind: ClassVar[Kind] = SERVER
    servers: list[Server]
    probe_ids: list[str]
    eras: list[dict] = field(default_factory=list)
    turns: list[AbstractContextManager] = field(default_factory=list)

    def plan(self) -> list[Job]:
        """Check by check, arm by arm, every server's job side by side; none for an arm that is another selected
        check's (Probe.same_arms: shared)."""
        count = range(len(self.servers))
        arms = [(check_id, arm) for check_id in self.probe_ids for arm in CHECKS[check_id].arms]
        return [Job(i, check_id, arm) for check_id, arm in arms if not self.shared(check_id, arm) for i in count]

    def shared(self, check_id: str, arm: str) -> tuple[str, str] | None:
        """The (check, arm) whose record a check's arm reads in this run: another selected check's arm that is
        the same trigger and observation (Probe.same_arms), so one start of the server serves both; else None."""
        owner = CHECKS[check_id].same_arms.get(arm)
        return owner if owner is not None and owner[0] in self.probe_ids else None

    def rows(self) -> list[Row]:
        """The era probe's row of each server whose era is not given (no --protocol), then the plan's."""
        found = [(server.label, *ERA_ROW) for server in self.servers if server.protocol is None]
        return found + plan_rows([server.label for server in self.servers], self.plan())

    @contextlib.contextmanager
    def ready(self, supervisor: spawn.Supervisor, options: Options, on_arm: ArmListener) -> Iterator[Servers]:
        """Each server's era found (as many at once as arms), then its turn: none, or a lock if --sequential-arms."""
        probe_era = functools.partial(_era, supervisor, options=options, on_arm=on_arm)
        found = map_cut_short(probe_era, self.servers, workers(options), supervisor)
        servers = [replace(server, protocol=era["protocol"]) for server, era in zip(self.servers, found, strict=True)]
        turns = [threading.Lock() if server.sequential_arms else contextlib.nullcontext() for server in servers]
        yield replace(self, servers=servers, eras=found, turns=turns)

    def run(
        self, supervisor: spawn.Supervisor, job: Job, options: Options, on_arm: ArmListener
    ) -> dict[Job, ArmRecord]:
        """The job's arm once its server has its turn: only then is it running, and timed; read by every selected
        check that shares it too (readers), each deciding on its own trials (run_trials); a rerun alone with the
        trials it may take, its check's own, and named so in the live view."""
        label = self.servers[job.subject].label
        arm = f"{job.arm}, {RERUN}" if job.rerun else job.arm
        probes = {job: replace(CHECKS[job.probe], trials=max(CHECKS[job.probe].trials, job.rerun))}
        if not job.rerun:
            probes |= {reader: CHECKS[reader.probe] for reader in self.readers(job)}
        with self.turns[job.subject]:
            return run_arm(supervisor, label, arm, probes, lambda: self._record(job, options), on_arm)

    def readers(self, job: Job) -> list[Job]:
        """The jobs, never planned, of the selected checks whose arm is job's (shared): its run decides them too."""
        return [
            Job(job.subject, check_id, arm)
            for check_id in self.probe_ids
            for arm in CHECKS[check_id].arms
            if self.shared(check_id, arm) == (job.probe, job.arm)
        ]

    def _record(self, job: Job, options: Options) -> ArmRecord:
        """The job's check run on its server, in its era; not_applicable, saying why, when the server has none."""
        server = self.servers[job.subject]
        if server.protocol is None:
            return {"not_applicable": self.eras[job.subject]["evidence"]}
        return CHECKS[job.probe].run(job.arm, server, options)

    def reruns(self, records: dict[Job, ArmRecord]) -> list[Job]:
        """The arms, to run again one at a time, of each check found reproduced or inconclusive on a server whose
        arms ran side by side: the verdicts another arm of the same server could have made (one not reproduced
        is not rerun: method.md, "Arms side by side", says what that leaves undetected). An arm that showed the
        defect is tried alone until it shows it again, up to RATE_TRIALS times: a defect that is a race (a
        crash at SIGTERM one run in two) is not taken for interference on one rerun that missed it. A shared arm
        is rerun as the check's own (its trials stop on what that check shows), except one that takes a single
        trial (its arm did not show its defect side by side, and the check does not repeat it: Probe.trials) where
        its owner's arm is rerun too: the owner's rerun is one run alone of the same trigger, and the check reads
        its last trial (_alone). A check that repeats the arm (S14) is rerun with its own trials."""
        jobs = [
            Job(i, check_id, arm, _rerun_trials(CHECKS[check_id], record))
            for i, check_id in self._rerun_checks(records)
            for arm, record in self._arms(records, i, check_id).items()
        ]
        rerun = {(job.subject, job.probe, job.arm) for job in jobs}
        once = [job for job in jobs if max(job.rerun, CHECKS[job.probe].trials) == 1]
        return [job for job in jobs if not (job in once and self._owner_rerun(job, rerun))]

    def _rerun_checks(self, records: dict[Job, ArmRecord]) -> list[tuple[int, str]]:
        """(server, check) of each check found reproduced or inconclusive side by side: those reruns() runs again."""
        again = (Outcome.REPRODUCED, Outcome.INCONCLUSIVE)
        return [
            (i, check_id)
            for i, server in enumerate(self.servers)
            for check_id in (self.probe_ids if not server.sequential_arms else ())
            if decide_check(CHECKS[check_id], self._arms(records, i, check_id))["verdict"] in again
        ]

    def _owner_rerun(self, job: Job, rerun: set[tuple[int, str, str]]) -> bool:
        """Whether job's arm is shared (shared) with an owner whose arm is among rerun ((server, check, arm))."""
        owner = self.shared(job.probe, job.arm)
        return owner is not None and (job.subject, *owner) in rerun

    def runs(self, records: dict[Job, ArmRecord]) -> list[Run]:
        """Each check's verdict per server, each run describing its server and the era it was spoken to in; a
        check rerun one at a time (reruns) is the rerun's where the two disagree (side_by_side)."""
        runs, rerun = [], set(self._rerun_checks(records))
        for i, server in enumerate(self.servers):
            era = _with_version(self.eras[i], [record for job, record in records.items() if job.subject == i])
            for check_id in self.probe_ids:
                check, arms = CHECKS[check_id], self._arms(records, i, check_id)
                described, verdict = _server_described(server, era), decide_check(check, arms)
                alone = self._alone(records, i, check_id) if (i, check_id) in rerun else {}
                side_by_side = None
                if alone:
                    verdict, arms, side_by_side = against_rerun(check, verdict, arms, alone)
                run = make_run(check_id, self.kind.key, described, verdict, NO_CONTRACT, arms)
                shared = {arm: " ".join(owner) for arm in check.arms if (owner := self.shared(check_id, arm))}
                if (side_by_side or {}).get("interfere"):  # its arms are the reruns: its own, or its owner's
                    shared = {arm: by for arm, by in shared.items() if arm not in _arms(records, i, check_id, True)}
                if shared:
                    run["shared_arms"] = shared
                if side_by_side is not None:
                    run["side_by_side"] = side_by_side
                runs.append(run)
        return runs

    def _arms(self, records: dict[Job, ArmRecord], subject: int, check_id: str) -> dict[str, ArmRecord]:
        """A check's arms on one server as they ran side by side, a shared arm's the trial of its owner's run that
        decided this check (readers, run_trials), with this check's own rate where it repeats the arm."""
        arms = _arms(records, subject, check_id)
        return {arm: arms[arm] for arm in CHECKS[check_id].arms}

    def _alone(self, records: dict[Job, ArmRecord], subject: int, check_id: str) -> dict[str, ArmRecord]:
        """A rerun check's arms as rerun one at a time ({} where nothing was rerun: the window method, a server with
        --sequential-arms), a shared arm that reruns() left to its owner read from the owner's rerun: its last
        trial, one run of the arm alone (the trials are the owner's)."""
        arms = _arms(records, subject, check_id, alone=True)
        for arm in CHECKS[check_id].arms:
            owner = self.shared(check_id, arm)
            if arm in arms or owner is None:
                continue
            for job, record in records.items():
                if job.rerun and (job.subject, job.probe, job.arm) == (subject, *owner):
                    arms[arm] = {key: value for key, value in record.items() if key != "trials"}
        return arms


INTERFERE = "arms interfere when side by side"
RERUN = "rerun alone"  # a rerun's arm in the live view


def _arms(records: dict[Job, ArmRecord], subject: int, check_id: str, alone: bool = False) -> dict[str, ArmRecord]:
    """A check's arms on one server, as they ran side by side, or as rerun one at a time (alone: {} if not)."""
    return {
        job.arm: record
        for job, record in records.items()
        if job.subject == subject and job.probe == check_id and bool(job.rerun) == alone
    }


def _rerun_trials(check: Probe, record: ArmRecord) -> int:
    """The trials of an arm's rerun alone: session.RATE_TRIALS where it showed the defect side by side, else one."""
    return session.RATE_TRIALS if _shown(check, record) else 1


def against_rerun(
    check: Probe, verdict: dict, arms: dict[str, ArmRecord], alone: dict[str, ArmRecord]
) -> tuple[dict, dict[str, ArmRecord], dict]:
    """A check's verdict from its arms side by side, checked against its rerun one at a time (alone): the
    verdict and arms the run keeps, and what it says of the two (side_by_side). Agreeing, the side by side
    run stands; disagreeing, the arms interfere through something their sandboxes do not separate, and the
    run is the one at a time's (where no other arm of the server ran), saying so, the side by side verdict
    and arms kept beside it."""
    rerun = decide_check(check, alone)
    side = {"verdict": verdict["verdict"], "rerun_alone": rerun["verdict"], "interfere": False}
    if rerun["verdict"] == verdict["verdict"]:
        return verdict, arms, side
    said = f"{INTERFERE}: {verdict['verdict']} side by side, {rerun['verdict']} one at a time"
    decided = {**rerun, "reason": f"{said}; {rerun['reason']}", "headline": f"{INTERFERE}: {rerun['headline']}"}
    return decided, alone, {**side, "interfere": True, "reason": verdict["reason"], "arms": arms}


def _server_described(server: Server, era: dict) -> dict:
    """What a server's run says of it: its label, command, environment, calls, and era."""
    described = {"label": server.label, "command": server.command, "env": server.env.described()}
    if server.large_call is not None:
        described["large_call"] = {"tool": server.large_call[0], "arguments": server.large_call[1]}
    if server.slow_call is not None:
        described["slow_call"] = {"tool": server.slow_call[0], "arguments": server.slow_call[1]}
    described["era"] = era
    return described


def _era(supervisor: spawn.Supervisor, server: Server, options: Options, on_arm: ArmListener) -> dict:
    """session.find_era (in an arm scope of the run's supervisor), shown in the live view when it starts a
    process (no --protocol). A failure of the probe itself leaves the legacy era, saying why, as no answer would."""
    if server.protocol is not None:
        with supervisor.arm_scope():
            return session.find_era(server, options)
    on_arm(server.label, *ERA_ROW, "running", "")
    try:
        with supervisor.arm_scope():
            found = session.find_era(server, options)
    except Exception as exc:
        why = f"the era probe failed: {type(exc).__name__}: {exc}"
        found = {"protocol": eras.LEGACY, "version": None, "chosen_by": eras.DISCOVER, "evidence": why}
    if not supervisor.stopping():  # cut short, it found nothing: no progress line after a signal
        on_arm(server.label, *ERA_ROW, "done", f"{found['protocol']}: {found['evidence']}")
    return found


def _with_version(era: dict, arms: list[dict]) -> dict:
    """The era found, with the legacy version the server answered initialize with (from its arms)."""
    if era["version"] is not None:
        return era
    answered = (arm.get("opening", {}).get("version") for arm in arms)
    return {**era, "version": next((version for version in answered if version), None)}


SHARED_CONTROL = "control"  # the host checks' control arm: run once per host, shared by every check


@dataclass(frozen=True)
class Hosts:
    """The host checks on hosts, decided by the bug/control rule; the control arm runs once per host (the first
    check's job) and every check shares it."""

    kind: ClassVar[Kind] = HOST
    hosts: list[Host]
    probe_ids: list[str]

    def plan(self) -> list[Job]:
        """Every host's shared control first, then check by check, arm by arm, every host's job side by side, the
        checks' slow arms (a window on a hang most hosts show) before the others: a host has more arms than
        FAST_PARALLEL_ARMS, and the one that waits for a free worker is then a short one."""
        count = range(len(self.hosts))
        jobs = [Job(i, self.probe_ids[0], SHARED_CONTROL) for i in count]
        checks = [HOST_CHECKS[check_id] for check_id in self.probe_ids]
        arms = [Job(i, c.id, arm) for c in checks for arm in c.arms if arm != SHARED_CONTROL for i in count]
        return jobs + sorted(arms, key=lambda job: job.arm not in HOST_CHECKS[job.probe].slow_arms)

    def rows(self) -> list[Row]:
        return plan_rows([host.label for host in self.hosts], self.plan())

    def ready(
        self, supervisor: spawn.Supervisor, options: Options, on_arm: ArmListener
    ) -> AbstractContextManager[Hosts]:
        """Hosts need nothing beyond their arms."""
        return contextlib.nullcontext(self)

    def run(
        self, supervisor: spawn.Supervisor, job: Job, options: Options, on_arm: ArmListener
    ) -> dict[Job, ArmRecord]:
        host, check = self.hosts[job.subject], HOST_CHECKS[job.probe]
        return run_arm(supervisor, host.label, job.arm, {job: check}, lambda: check.run(job.arm, host, options), on_arm)

    def reruns(self, records: dict[Job, ArmRecord]) -> list[Job]:
        """None: only a server's arms run in sandboxes and are checked against a rerun one at a time."""
        return []

    def runs(self, records: dict[Job, ArmRecord]) -> list[Run]:
        """Each check's verdict per host, from its own arms and the host's shared control."""
        runs = []
        for i, host in enumerate(self.hosts):
            control = records[Job(i, self.probe_ids[0], SHARED_CONTROL)]
            described = _host_described(host, control)
            for check_id in self.probe_ids:
                check = HOST_CHECKS[check_id]
                arms = {arm: control if arm == SHARED_CONTROL else records[Job(i, check_id, arm)] for arm in check.arms}
                runs.append(make_run(check_id, self.kind.key, described, decide(check, arms), NO_HOST_ARM, arms))
        return runs


def _host_described(host: Host, control: ArmRecord) -> dict:
    """What a host's runs say of it: its label, command, environment, the era it spoke in its control arm and,
    when it reached the server there, how it used servers (one, a server per operation, several at once)."""
    events = control.get("events", [])
    era = next((e["era"] for e in events if e.get("era")), None)
    described = {"label": host.label, "command": host.command, "era": era, "env": host.env.described()}
    if events:
        described["servers"] = host_session.server_shape(events)
    return described


def run_matrix(
    sdks: list[Sdk], case_ids: list[str], options: Options, on_arm: ArmListener = unwatched,
    supervisor: Supervised = None,
) -> list[Run]:
    """The cases on SDKs, in this process (the tests' and tables' entry; the command line runs the same Subject),
    under the caller's supervisor or one of its own (run_subject)."""
    return run_subject(Sdks(sdks, case_ids), options, on_arm, supervisor)


def run_servers(
    servers: list[Server], check_ids: list[str], options: Options, on_arm: ArmListener = unwatched,
    supervisor: Supervised = None,
) -> list[Run]:
    """The server checks on servers, in this process (as run_matrix)."""
    return run_subject(Servers(servers, check_ids), options, on_arm, supervisor)


def run_hosts(
    hosts: list[Host], check_ids: list[str], options: Options, on_arm: ArmListener = unwatched,
    supervisor: Supervised = None,
) -> list[Run]:
    """The host checks on hosts, in this process (as run_matrix)."""
    return run_subject(Hosts(hosts, check_ids), options, on_arm, supervisor)

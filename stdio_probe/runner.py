"""The matrix loop: every (SDK, case, arm), concurrently in the fast method, then a verdict per case."""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace

from stdio_probe import eras, spawn
from stdio_probe.cases import ARMS, CASES
from stdio_probe.checks import CHECKS, session
from stdio_probe.decide import NO_CONTRACT, NO_HOST_ARM, decide, decide_check, mitigation
from stdio_probe.hosts import HOST_CHECKS
from stdio_probe.hosts import session as host_session
from stdio_probe.model import Host, Options, Probe, Sdk, Server
from stdio_probe.record import ArmRecord, Run, make_run

FAST_PARALLEL_ARMS = 12
POLL = 0.1  # seconds between the main thread's looks at the arms (a signal waits no longer)
FORK_AHEAD = 2  # SDKs whose fork servers preload while the arms of an earlier one run

# on_arm(sdk_spec, case_id, arm, status, note): status is "running" or "done"
ArmListener = Callable[[str, str, str, str, str], None]


def run_arm(label: str, probe: Probe, arm: str, run: Callable[[], dict], on_arm: ArmListener) -> ArmRecord:
    """One arm of any probe on any subject (run() makes its record); a failure of the probe itself becomes
    the arm's error, never a lost run, and so does a record the probe cannot read."""
    on_arm(label, probe.id, arm, "running", "")
    started = time.time()
    try:
        with spawn.arm_scope():
            record = run()
    except Exception as exc:
        record = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=5)}
    record["started_at"] = started
    record["duration_s"] = round(time.time() - started, 3)
    try:
        note = probe.note(record)
    except Exception as exc:
        record["error"] = note = f"cannot assess: {type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc(limit=5)
    on_arm(label, probe.id, arm, "done", note)
    return record


def run_matrix(sdks: list[Sdk], case_ids: list[str], options: Options, on_arm: ArmListener) -> list[Run]:
    """Run every arm and decide each case.

    The fast method runs arms concurrently and forks fixtures from a warm fork server per SDK;
    the window method runs them one at a time, each a fresh exec, as the article did.
    """
    # every case's bug, control and mitigated arms first, then the extra arms, so no case's verdict waits for
    # them; a case's slow arms (long fixed waits) before all others, so they do not end the run
    plan = [(case_id, arm) for case_id in case_ids for arm in CASES[case_id].arms if arm in ARMS]
    plan += [(case_id, arm) for case_id in case_ids for arm in CASES[case_id].arms if arm not in ARMS]
    plan.sort(key=lambda job: job[1] not in CASES[job[0]].slow_arms)
    # one SDK after another (the pool takes jobs in this order), each SDK's fork server started FORK_AHEAD
    # SDKs before its arms and closed after them
    jobs = [(i, case_id, arm) for i in range(len(sdks)) for case_id, arm in plan]
    fast = options.method == "fast"
    warm = spawn.ForkServers([(sdk.python, sdk.env) for sdk in sdks], len(plan), FORK_AHEAD) if fast else None

    def job(i: int, case_id: str, arm: str) -> dict:
        try:
            if warm is not None:
                warm.begin(i)
            case = CASES[case_id]
            return run_arm(sdks[i].spec, case, arm, lambda: case.run(arm, sdks[i], options), on_arm)
        finally:
            if warm is not None:
                warm.end(i)

    try:
        records = run_jobs(job, jobs, FAST_PARALLEL_ARMS if fast else 1)
    finally:
        if warm is not None:
            warm.close()
    runs = []
    for i, sdk in enumerate(sdks):
        for case_id in case_ids:
            arms = {arm: records[(i, case_id, arm)] for arm in CASES[case_id].arms}
            case = CASES[case_id]
            verdict = decide(case, arms)
            held = mitigation(case, arms)
            runs.append(make_run(case_id, "sdk", {"spec": sdk.spec, **sdk.facts}, verdict, held, arms))
    return runs


def run_jobs(run: Callable[..., dict], jobs: list[tuple], workers: int) -> dict[tuple, dict]:
    """run(*job) for every job on a pool of workers; job -> its record.

    The main thread waits in short polls, so a signal's exception is raised at once. On it (Ctrl-C,
    SIGTERM) the run is cut short: spawn.stop() kills every server and fixture, which ends the waits
    of the running arms, no further arm starts, and the pool is left without joining its threads.
    """
    pool = ThreadPoolExecutor(max_workers=workers)
    futures = {job: pool.submit(run, *job) for job in jobs}
    try:
        while wait(futures.values(), timeout=POLL).not_done:
            pass
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        spawn.stop()
        raise
    pool.shutdown()
    return {job: future.result() for job, future in futures.items()}


def unavailable(spec: str, facts: dict, case_ids: list[str], reason: str) -> list[Run]:
    """The runs of an SDK that could not be made ready: an error verdict per case, no arms."""
    sdk = {"spec": spec, **facts}
    held = {"held": None, "note": reason, "status": "not_evaluated"}
    return [
        make_run(case_id, "sdk", sdk, {"verdict": "error", "reason": reason}, held, {})
        for case_id in case_ids
    ]


def run_servers(servers: list[Server], check_ids: list[str], options: Options, on_arm: ArmListener) -> list[Run]:
    """Find each server's era, then run every server check's arms in it (concurrently in the fast
    method; one server's arms one at a time unless it is declared --parallel-arms) and decide each check
    per server. A server sharing no era with the probe gets not_applicable arms."""
    jobs = [(i, check_id, arm) for check_id in check_ids for arm in CHECKS[check_id].arms for i in range(len(servers))]
    workers = FAST_PARALLEL_ARMS if options.method == "fast" else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = list(pool.map(lambda server: _era(server, options, on_arm), servers))
    servers = [replace(server, protocol=era["protocol"]) for server, era in zip(servers, found, strict=True)]

    # one server's arms take turns unless it is declared safe in parallel: its copies may share a lock file,
    # a port or a database, through which one arm's evidence would change another's
    turns = [contextlib.nullcontext() if server.parallel_arms else threading.Lock() for server in servers]

    def arm_of(i: int, check_id: str, arm: str) -> tuple:
        server, check = servers[i], CHECKS[check_id]
        if server.protocol is None:
            return server.label, check, arm, lambda: {"not_applicable": found[i]["evidence"]}, turns[i]
        return server.label, check, arm, lambda: check.run(arm, server, options), turns[i]

    records = _run_subject_arms(jobs, arm_of, options, on_arm)
    runs = []
    for i, server in enumerate(servers):
        era = _with_version(found[i], [record for job, record in records.items() if job[0] == i])
        for check_id in check_ids:
            arms = {arm: records[(i, check_id, arm)] for arm in CHECKS[check_id].arms}
            described = {"label": server.label, "command": server.command, "env": server.env.described()}
            if server.large_call is not None:
                described["large_call"] = {"tool": server.large_call[0], "arguments": server.large_call[1]}
            if server.slow_call is not None:
                described["slow_call"] = {"tool": server.slow_call[0], "arguments": server.slow_call[1]}
            described["era"] = era
            verdict = decide_check(CHECKS[check_id], arms)
            runs.append(make_run(check_id, "server", described, verdict, NO_CONTRACT, arms))
    return runs


ERA_ROW = ("era", eras.DISCOVER)  # the live view's row of a server's era probe: (case, arm)


def _era(server: Server, options: Options, on_arm: ArmListener) -> dict:
    """session.find_era, shown in the live view when it starts a process (no --protocol). A failure
    of the probe itself leaves the legacy era, saying why, as no answer would."""
    if server.protocol is not None:
        with spawn.arm_scope():
            return session.find_era(server, options)
    on_arm(server.label, *ERA_ROW, "running", "")
    try:
        with spawn.arm_scope():
            found = session.find_era(server, options)
    except Exception as exc:
        why = f"the era probe failed: {type(exc).__name__}: {exc}"
        found = {"protocol": eras.LEGACY, "version": None, "chosen_by": eras.DISCOVER, "evidence": why}
    on_arm(server.label, *ERA_ROW, "done", f"{found['protocol']}: {found['evidence']}")
    return found


def _with_version(era: dict, arms: list[dict]) -> dict:
    """The era found, with the legacy version the server answered initialize with (from its arms)."""
    if era["version"] is not None:
        return era
    answered = (arm.get("opening", {}).get("version") for arm in arms)
    return {**era, "version": next((version for version in answered if version), None)}


SHARED_CONTROL = "control"  # the host checks' control arm: run once per host, shared by every check


def run_hosts(hosts: list[Host], check_ids: list[str], options: Options, on_arm: ArmListener) -> list[Run]:
    """Run the host checks' arms (concurrently in the fast method), the control once per host, and decide each
    check per host by the bug/control rule."""
    first = HOST_CHECKS[check_ids[0]]
    jobs = [(i, check_ids[0], SHARED_CONTROL) for i in range(len(hosts))]
    jobs += [
        (i, check_id, arm)
        for check_id in check_ids
        for arm in HOST_CHECKS[check_id].arms
        if arm != SHARED_CONTROL
        for i in range(len(hosts))
    ]

    def arm_of(i: int, check_id: str, arm: str) -> tuple:
        check = HOST_CHECKS[check_id]
        return hosts[i].label, check, arm, lambda: check.run(arm, hosts[i], options), contextlib.nullcontext()

    records = _run_subject_arms(jobs, arm_of, options, on_arm)
    runs = []
    for i, host in enumerate(hosts):
        control = records[(i, first.id, SHARED_CONTROL)]
        events = control.get("events", [])
        era = next((e["era"] for e in events if e.get("era")), None)
        described = {"label": host.label, "command": host.command, "era": era, "env": host.env.described()}
        if events:  # how it used servers, with the well-behaved one: one, a server per operation, several at once
            described["servers"] = host_session.server_shape(events)
        for check_id in check_ids:
            check = HOST_CHECKS[check_id]
            arms = {arm: control if arm == SHARED_CONTROL else records[(i, check_id, arm)] for arm in check.arms}
            verdict = decide(check, arms)
            runs.append(make_run(check_id, "host", described, verdict, NO_HOST_ARM, arms))
    return runs


def _run_subject_arms(jobs: list[tuple], arm_of, options: Options, on_arm: ArmListener) -> dict[tuple, dict]:
    """Each job's arm against a server or host (arm_of(*job) -> label, check, arm, run() -> its record, and
    the subject's turn: a lock its arms take in turn, or a null context), concurrently in the fast method; a
    failure of the probe itself becomes the arm's error. An arm is running, and timed, once it has its turn."""

    def one(*job) -> ArmRecord:
        label, check, arm, run, turn = arm_of(*job)
        with turn:
            return run_arm(label, check, arm, run, on_arm)

    return run_jobs(one, jobs, FAST_PARALLEL_ARMS if options.method == "fast" else 1)

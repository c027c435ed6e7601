"""Host checks H1-H11 (--host) against real processes: stdlib fixture hosts with one defect shape each
(tests/hosts/fixture_host.py), and the Python SDK client recipe (examples/hosts/python_sdk_client.py), pinned
and with the patched copies of tests/sdk_fixes.py, where H4, H5 and H6 must agree with L9, L8 and L5."""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import sample, spawn
from stdio_probe.core.model import Host, Options, Sdk
from stdio_probe.fixtures.fixture_events import read_events
from stdio_probe.host import session
from stdio_probe.host.checks import h1_graceful_close, h2_eof_ignored, h11_mute_server
from stdio_probe.report import record
from tests.fixture_commands import fixture_host
from tests.host_table import EXPECTED
from tests.paths import ROOT, TESTS
from tests.proof_readings import proof_readings

HOSTS = TESTS / "hosts"
RECIPES = ROOT / "examples" / "hosts"
# well behaved: its call bounded (H11), the bound longer than a 16 MiB answer takes under load (H8, 2 s at load 15)
WELL_BEHAVED = ("--call-timeout", "8")




def sdk_host(sdk: Sdk) -> str:
    env = [f"{name}={value}" for name, value in sdk.env.items()]
    return (
        shlex.join([*(["env", *env] if env else []), sdk.python, str(RECIPES / "python_sdk_client.py")]) + " {server}"
    )


def probe(tmp_path: Path, host: str, *args: str, name: str = "host") -> tuple[int, dict]:
    out = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}.json"
    code = cli.main(["--host", host, "--name", name, "--out", str(out), *args])
    return code, json.loads(out.read_text()) if out.exists() else {}


def verdicts(document: dict) -> dict[str, str]:
    return {run["case"]: run["verdict"] for run in document["runs"]}


def test_a_well_behaved_host_passes_every_check_and_the_file_is_valid(tmp_path):
    code, document = probe(tmp_path, fixture_host(*WELL_BEHAVED), name="good")
    assert code == 0
    record.validate(document, "results")
    found = verdicts(document)
    assert found.pop("H9") == "not_applicable"  # it does not reconnect
    assert set(found.values()) == {"not_reproduced"}, found
    assert all(run["host"]["era"] == "legacy" for run in document["runs"])
    assert document["metadata"]["leftover_processes"] == 0
    controls = {json.dumps(run["arms"]["control"], sort_keys=True) for run in document["runs"]}
    assert len(controls) == 1  # one control arm per host, shared by its checks


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (("--never-close-stdin",), {"H1": "reproduced", "H2": "not_reproduced"}),
        (("--never-signal",), {"H2": "reproduced", "H3": "reproduced", "H4": "reproduced", "H1": "not_reproduced"}),
        (("--direct-child-only",), {"H4": "reproduced", "H10": "reproduced", "H3": "not_reproduced"}),
        (("--hang-on-dead-server",), {"H5": "reproduced", "H6": "not_reproduced"}),
        (("--pipe-stderr",), {"H7": "reproduced", "H8": "not_reproduced"}),
        (("--reconnect",), {"H9": "reproduced"}),
        (("--reconnect", "--backoff"), {"H9": "not_reproduced"}),
    ],
)
def test_each_defect_shape_is_reproduced_by_its_check_alone(tmp_path, flags, expected):
    code, document = probe(tmp_path, fixture_host(*flags), "--only", ",".join(expected), "--window", "3")
    assert code == 0
    assert verdicts(document) == expected, [proof_readings(run) for run in document["runs"]]
    assert document["metadata"]["leftover_processes"] == 0


@pytest.mark.parametrize("method", ["fast", "window"])
def test_h11_a_host_that_waits_on_a_mute_server_with_no_bound_is_shown_one_that_gives_up_is_not(tmp_path, method):
    """The mute server reads the call and never answers. The fixture host waits on it with no bound: in its poll
    loop (a 100 ms timeout: never proven, the window decides, counted while its tree is idle) or, with
    --hang-on-dead-server, in poll(2) with no timeout (proven in the fast method). With --call-timeout 1 it cancels
    the call, closes the server's stdin and exits 1: not shown, the first step timed from the call."""
    hosts = {"no-bound": (), "no-timer": ("--hang-on-dead-server",), "gives-up": ("--call-timeout", "1")}
    argv = [word for name, flags in hosts.items() for word in ("--host", fixture_host(*flags), "--name", name)]
    out = tmp_path / "h11.json"
    assert cli.main([*argv, "--only", "H11", "--window", "3", "--method", method, "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    runs = {run["host"]["label"]: run for run in document["runs"]}
    found = {label: run["verdict"] for label, run in runs.items()}
    assert found == {"no-bound": "reproduced", "no-timer": "reproduced", "gives-up": "not_reproduced"}, [
        proof_readings(run) for run in runs.values()
    ]
    stuck = {label: runs[label]["arms"]["bug"]["stuck"] for label in ("no-bound", "no-timer")}
    assert stuck["no-bound"]["decided_by"] == "window" and stuck["no-bound"]["idle_s"] >= 3, stuck
    assert stuck["no-timer"]["decided_by"] == ("proof" if method == "fast" else "window"), stuck
    gave_up = runs["gives-up"]["arms"]["bug"]
    (after, first), *rest = h11_mute_server.gave_up(gave_up)
    assert first == "cancel" and after > 0.9, (after, first)  # not before its 1 s timeout; how late is load
    assert [what for _, what in rest] == ["stdin closed", "exit 1"] and "timed out after 1 s" in gave_up["host_stdout"]
    assert document["metadata"]["leftover_processes"] == 0


@pytest.mark.parametrize("busy", [True, False], ids=["busy", "idle"])
def test_a_host_busy_past_the_window_after_the_answer_is_not_stuck_an_idle_one_is(busy):
    """The window rule (method.md): a host that spends two windows on a core after the answer before it closes the
    server (a teardown a loaded machine makes long) makes progress all the while: it exits, H1 not shown; one
    asleep as long is still running a window after the answer (no proof: its sleep has a timer), H1 shown."""
    flags = ("--close-after", "6", *(("--busy-close",) if busy else ()))
    record = h1_graceful_close.PROBE.run_arm("bug", Host("h", fixture_host(*flags)), Options(3.0))
    finding = h1_graceful_close.PROBE.assess(record)
    if busy:
        assert "stuck" not in record and record["host_exit_t"] - session.at("answered")(record["events"]) >= 6, record
        assert finding.shown is False, finding
    else:
        assert record["stuck"]["decided_by"] == "window" and record["stuck"]["idle_s"] >= 3, record["stuck"]
        assert finding.shown is True and "idle the last" in finding.note, finding


@pytest.mark.parametrize(("stretches", "shown"), [([[100.5, 111.0]], True), ([[100.5, 102.5], [110.0, 112.5]], False)])
def test_h2_times_the_first_signal_by_the_hosts_longest_stretch_without_progress(stretches, shown):
    """A SIGTERM 12 s after EOF is beyond the 10 s bound when the host waited 10.5 s of it without progress; not
    when it worked through all but two stretches of 2 s (a teardown slowed by load)."""
    events = [{"event": "stdin_eof", "t": 100.0}, {"event": "signal", "t": 112.0, "name": "SIGTERM", "pid": 1}]
    record = {"events": events, "bound_s": 10.0, "host": {"exit_code": 0}, "survivors": [], "idle_stretches": stretches}
    assert h2_eof_ignored.escalation(record).shown is shown


def test_hangs_are_decided_by_proof_in_the_fast_method(tmp_path):
    _, document = probe(tmp_path, fixture_host("--never-signal"), "--only", "H2", "--window", "30")
    stuck = document["runs"][0]["arms"]["bug"]["stuck"]
    assert stuck["decided_by"] == "proof", stuck  # not the 30 s window: how soon is load, not the host


def test_the_wrapper_shape_has_its_own_pair_in_h4(tmp_path):
    _, document = probe(tmp_path, fixture_host("--direct-child-only"), "--only", "H4")
    run = document["runs"][0]
    assert run["pairs"]["wrapper"]["verdict"] == "reproduced"  # only the wrapper got the signal
    assert "wrapper: reproduced" in run["reason"]


def test_a_host_that_starts_a_server_per_operation_is_judged_on_each_server(tmp_path):
    """One server for tools/list, closed, a new one for tools/call, each signalled alone (no PDEATHSIG): recorded
    as a server per operation. H9: launch 2 (the call's) dies at start and nothing follows: not_applicable, not
    "gave up after the crash loop". H3: each server timed from its own EOF. H10: the call's server, left alive,
    got no signal; the SIGTERM the host sent its list server is that server's, and the note says so."""
    flags = ("--server-per-operation", "--direct-child-only")
    code, document = probe(tmp_path, fixture_host(*flags), "--only", "H3,H9,H10", "--window", "3")
    assert code == 0 and document["metadata"]["leftover_processes"] == 0
    runs = {run["case"]: run for run in document["runs"]}
    assert {run["host"]["servers"] for run in runs.values()} == {"a server per operation"}
    assert {case: run["verdict"] for case, run in runs.items()} == {
        "H3": "not_reproduced",
        "H9": "not_applicable",
        "H10": "reproduced",
    }, [run["reason"] for run in runs.values()]
    starts = {e["launch"]: e["pid"] for e in runs["H9"]["arms"]["bug"]["events"] if e["event"] == "start"}
    assert runs["H9"]["reason"] == (
        f"bug arm: does not reconnect: no relaunch after launch 2 (pid {starts[2]}) crashed at start"
        " (a server per operation)"
    )
    h3 = runs["H3"]["arms"]["bug"]
    for launch in (1, 2):
        pid = next(e["pid"] for e in h3["events"] if e["event"] == "start" and e["launch"] == launch)
        eof = next(e["t"] for e in h3["events"] if e["event"] == "stdin_eof" and e["launch"] == launch)
        gone = h3["server_gone_t"][str(pid)] - eof
        assert f"launch {launch} (pid {pid}): " in runs["H3"]["reason"]
        assert f"gone {gone:.2f} s after EOF" in runs["H3"]["reason"], runs["H3"]["reason"]
    h10 = runs["H10"]["arms"]["bug"]
    pids = {e["launch"]: e["pid"] for e in h10["events"] if e["event"] == "start"}
    assert any(e["event"] == "signal" and e["launch"] == 1 for e in h10["events"])  # the list server's, at close
    assert runs["H10"]["reason"].startswith(
        f"bug: launch 2 (pid {pids[2]}): server alive 1 s after the host was killed: {pids[2]} adopted by the probe"
    )
    assert "(no signal)" in runs["H10"]["reason"], runs["H10"]["reason"]


@pytest.mark.parametrize("method", ["fast", "window"])
def test_a_host_that_signals_only_the_wrapper_is_judged_on_the_wrappers_child(tmp_path, method):
    """--term-at-once: SIGTERM to the server's pid alone at once, stdin never closed, then the host waits for the
    server's stdout to end. The wrapper dies; its child (the real server, which ignores EOF) holds the pipes, so
    the host never exits: the probe kills it, and the child, never signalled, is alive 1 s later: reproduced on
    H4's wrapper pair (it read inconclusive, "host never exited")."""
    host = fixture_host("--term-at-once")
    code, document = probe(tmp_path, host, "--only", "H4", "--window", "3", "--method", method)
    assert code == 0 and document["metadata"]["leftover_processes"] == 0
    run = document["runs"][0]
    assert run["pairs"]["wrapper"]["verdict"] == "reproduced", run["reason"]
    wrapper = run["arms"]["wrapper"]
    assert wrapper["stuck"]["decided_by"] == ("proof" if method == "fast" else "window"), wrapper["stuck"]
    assert wrapper["host"]["ended_by"] == "SIGKILL" and not wrapper["host_exited_by_itself"]
    real = next(e["pid"] for e in wrapper["events"] if e["event"] == "real_server")
    assert [s["pid"] for s in wrapper["survivors"]] == [real]
    assert not any(e["event"] == "signal" and e["pid"] == real for e in wrapper["events"])
    assert "never signalled alive 1 s after the probe killed it" in run["pairs"]["wrapper"]["reason"]


def test_a_daemon_that_drops_the_marker_is_found_counted_for_h4_and_reaped(tmp_path):
    """A well-behaved host that leaves a daemon (double fork, setsid, re-exec with an empty environment): the
    daemon keeps the run id in its command line ({server}'s words), so H4 counts it and the arm reaps it."""
    code, document = probe(tmp_path, fixture_host("--daemon"), "--only", "H4")
    run = document["runs"][0]
    assert code == 0 and run["verdict"] == "reproduced", run["reason"]
    assert document["metadata"]["leftover_processes"] == 0
    assert sample.marked_processes(spawn.MARKER, spawn.RUN_ID, argv=True) == []


@pytest.mark.parametrize("method", ["fast", "window"])
def test_a_host_that_grows_after_the_answer_is_measured_without_its_forks_copy(tmp_path, method):
    """The host holds 150 MiB before it forks the server (the fork's copy, until its exec, held as much) and takes
    200 MiB more after the answer: H8 measures the host's growth, not a baseline inflated by that copy."""
    _, document = probe(tmp_path, fixture_host("--grows-after-answer"), "--only", "H8", "--method", method)
    run = document["runs"][0]
    assert run["verdict"] == "reproduced", run["reason"]
    bug = run["arms"]["bug"]
    assert (bug["host_peak_kib"] - bug["base_kib"]) / 1024 > 160, run["reason"]


def test_a_host_that_grows_and_exits_between_two_readings_is_measured_by_the_kernels_peak(tmp_path, monkeypatch):
    """A loaded machine can space the /proc readings past a host's growth and exit: here every process is read
    once and never again (a starved probe), and the peak still shows, from the kernel's figure for the exited
    host (sample.exit_peak_kib)."""
    first: dict[int, int] = {}
    read = session._hwm_kib

    def read_once(pid: int) -> int:
        if pid not in first:
            first[pid] = read(pid)
        return first[pid]

    monkeypatch.setattr(session, "_hwm_kib", read_once)
    _, document = probe(tmp_path, fixture_host("--grows-after-answer"), "--only", "H8")
    run = document["runs"][0]
    assert run["verdict"] == "reproduced", run["reason"]
    assert run["arms"]["bug"]["host_peak_kib"] / 1024 > 150 + 200, run["reason"]


def test_the_era_the_host_spoke_is_recorded(tmp_path):
    _, document = probe(tmp_path, fixture_host("--modern"), "--only", "H1")
    run = document["runs"][0]
    assert run["verdict"] == "not_reproduced" and run["host"]["era"] == "2026-07-28"
    messages = [e for e in run["arms"]["bug"]["events"] if e["event"] == "message"]
    assert messages[0]["method"] == "server/discover"
    assert "io.modelcontextprotocol/protocolVersion" in messages[1]["meta_keys"]


def test_a_host_that_never_connects_is_inconclusive_not_reproduced(tmp_path):
    code, document = probe(tmp_path, "sh -c 'exit 3' {server}", "--only", "H1,H5")
    assert code == 0
    assert set(verdicts(document).values()) == {"inconclusive"}
    assert "never started the server" in document["runs"][0]["reason"]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--host", "sh -c true"], "error: --host 'sh -c true': no {server} word"),
        (["--host", "no-such-host-program {server}"], "no-such-host-program not found"),
        (["--host", "sh {server}", "--large-call", "x {}"], "--large-call does not go with --host"),
        (["--host", "sh {server}", "--only", "S1"], "unknown check (with --host) S1"),
        (["--host", "sh {server}", "--server", "sh"], "--server does not go with --host"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, line):
    out = tmp_path / "r.json"
    assert cli.main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and line in err, err
    assert not out.exists()


def test_expect_junit_compare_merge_matrix_and_the_github_summary_know_host_runs(tmp_path, capsys, monkeypatch):
    host = fixture_host("--never-close-stdin")
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps({"H1": {"f": "reproduced"}, "H4": "not_reproduced"}))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    shard1, shard2, junit = tmp_path / "1.json", tmp_path / "2.json", tmp_path / "junit.xml"
    argv = ["--host", host, "--name", "f", "--expect", str(expect)]
    assert cli.main([*argv, "--only", "H1", "--out", str(shard1), "--junit", str(junit)]) == 0
    assert cli.main(["--host", host, "--name", "f", "--only", "H4", "--out", str(shard2)]) == 0
    assert 'name="H1' in junit.read_text() and "f (legacy era)" in junit.read_text()
    assert "H1" in summary.read_text() and "f (legacy era)" in summary.read_text()
    merged = tmp_path / "merged.json"
    assert cli.main(["--merge", str(merged), str(shard1), str(shard2), "--expect", str(expect), "--only", "H1,H4"]) == 0
    assert verdicts(json.loads(merged.read_text())) == {"H1": "reproduced", "H4": "not_reproduced"}
    assert cli.main(["--compare", str(shard1), str(shard1)]) == 0
    capsys.readouterr()
    assert cli.main(["--host", host, "--name", "f", "--only", "H1,H4", "--list-matrix"]) == 0
    matrix = json.loads(capsys.readouterr().out)
    assert [entry["case"] for entry in matrix["include"]] == ["H1", "H4"]
    assert shlex.split(matrix["include"][0]["args"])[:2] == ["--host", host]


# ---- the Python SDK's client as the host: item 3 (agreement with the SDK cases) and 4 (both methods)

AGREES = {"H4": "L9", "H5": "L8", "H6": "L5"}
SDK_HOST_ROW = EXPECTED["python-sdk-2.2.0"]  # the host table's row: python_sdk_client.py on mcp 2.2.0, the pinned


@pytest.mark.parametrize("check", list(AGREES))
def test_a_fix_of_the_sdk_case_makes_its_host_check_not_reproduced(tmp_path, fixed, check):
    _, document = probe(tmp_path, sdk_host(fixed(AGREES[check])), "--only", check, name=f"fix-{AGREES[check]}")
    run = document["runs"][0]
    assert run["verdict"] == "not_reproduced", run["reason"]


def test_h11_the_sdk_host_waits_on_a_mute_server_at_any_bound(tmp_path, pinned):
    """stdio_client and ClientSession with their defaults (read_timeout_seconds None): the call is proven pending
    forever, proven before any window (here 60 s) could end."""
    _, document = probe(tmp_path, sdk_host(pinned), "--only", "H11", "--window", "60", name="mcp")
    run = document["runs"][0]
    stuck = run["arms"]["bug"]["stuck"]
    proven = stuck["decided_by"] == "proof"  # not the 60 s window: how many seconds it took is load, not the host
    assert run["verdict"] == "reproduced" and proven, proof_readings(run)


@pytest.mark.slow(50)
@pytest.mark.parametrize("method", ["fast", "window"])
def test_the_sdk_host_gives_the_host_tables_verdicts_by_either_method(tmp_path, pinned, method):
    """Every check on the pinned SDK's client: H4, H5, H6 show L9, L8, L5, and each method gives the verdicts of
    the host table's row for the same recipe on the same mcp (so the two methods agree). One test per method:
    the two runs (about 50 s each under load) go to two workers instead of following each other."""
    _, document = probe(tmp_path, sdk_host(pinned), "--method", method, "--window", "8", name="mcp")
    found = verdicts(document)
    assert found == SDK_HOST_ROW, [proof_readings(r) for r in document["runs"]]
    assert {found[check] for check in AGREES} == {"reproduced"}
    assert {run["host"]["era"] for run in document["runs"]} == {"legacy"}


def test_the_scenario_server_logs_a_flooding_host_within_its_bounds(tmp_path, monkeypatch):
    """What a host sends is logged for the probe to read: megabytes of method, id or _meta keys are cut; past
    KIND_LOGGED events of one kind (a method) one event says so, and the other kinds are still logged (a call and a
    cancel after a flood), up to KINDS_LOGGED kinds; params that are not an object do not crash it."""
    monkeypatch.syspath_prepend(str(spawn.FIXTURES))  # its bounds, from the fixture (which imports its neighbours)
    scenario_server = importlib.import_module("scenario_server")

    events = tmp_path / "server.events"
    huge = "m" * 1_000_000
    meta = {f"key-{n}-{'k' * 1000}": n for n in range(30)}
    flood = scenario_server.KIND_LOGGED + 5
    lines = [
        {"jsonrpc": "2.0", "id": huge, "method": huge, "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]},
        {"jsonrpc": "2.0", "id": huge, "method": "tools/call", "params": {"name": "probe"}},
        *[{"jsonrpc": "2.0", "method": "notifications/progress"}] * flood,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "probe"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
        *[{"jsonrpc": "2.0", "method": f"notifications/kind-{n}"} for n in range(scenario_server.KINDS_LOGGED)],
    ]
    argv = [sys.executable, str(session.SCENARIO), "--events", str(events), "--run", "run", "--tag", "tag"]
    done = subprocess.run(
        argv, input="".join(json.dumps(line) + "\n" for line in lines).encode(), capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    logged = read_events(str(events))
    messages = [e for e in logged if e["event"] == "message"]
    methods = [e["method"] for e in messages]
    assert methods.count("notifications/progress") == scenario_server.KIND_LOGGED
    after_flood = methods[len(methods) - methods[::-1].index("notifications/progress") :]
    assert after_flood[:2] == ["tools/call", "notifications/cancelled"], after_flood
    kinds = len({f"message {method}" for method in methods} | {"answered"})
    assert kinds == scenario_server.KINDS_LOGGED
    unlogged = [(e["kind"], e["after"]) for e in logged if e["event"] == "messages_unlogged"]
    flooded = ("message notifications/progress", scenario_server.KIND_LOGGED)
    assert unlogged == [flooded, (scenario_server.OTHER_KINDS, 0)]
    answered = [e for e in logged if e["event"] == "answered"]
    assert len(answered) == 2 and len(answered[0]["id"]) == scenario_server.FIELD_LOGGED
    first = messages[0]
    assert len(first["method"]) == len(first["id"]) == scenario_server.FIELD_LOGGED
    assert len(first["meta_keys"]) == scenario_server.META_KEYS_LOGGED
    assert messages[1]["method"] == "initialize" and events.stat().st_size < 4_000_000

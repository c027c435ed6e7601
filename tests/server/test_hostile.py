"""Hostile servers and hostile input (issue 25): the probe stays bounded in memory and time, leaves
nothing alive, and ends every failure of its own in one line with a distinct exit code.

The servers are tests/hostile_server.py, real processes. Runs that must be measured from outside
(peak RSS, signals, SIGKILL of the probe) are the CLI in a child process with a run marker of
their own; the others go through the runner in this process. Every test also passes conftest's
guard: no process of this run is left alive.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import model, runner, sample, spawn, wire
from stdio_probe.core.model import Options, Server
from tests.cli_run import PROBE
from tests.fixture_commands import BUSY_WINDOW, HOSTILE
from tests.paths import ROOT

RSS_BOUND_KB = 128 * 1024  # the probe's stated peak RSS bound (docs/servers-and-hosts.md, "Hostile servers")
SIGNAL_BOUND = 2.0  # seconds from the first SIGINT or SIGTERM to the probe's exit, its waits for a CPU not counted
GUARDIAN_BOUND = 60.0  # seconds the probe's guardian may take to end once the probe is killed (a bound on a wait)
LARGE_ARGUMENT = "big " + json.dumps({"x": "a" * 120_000})  # more than a pipe holds: its write blocks


def hostile(mode: str) -> str:
    return f"{sys.executable} {HOSTILE} {mode}"


def marked(run_id: str) -> list[dict]:
    """The probe started with run_id and every process it started: a marker the probe is given is namespaced
    (run_id/its own id) in what it starts. /proc is listed until no new pid shows (a pid hopper)."""
    given, namespaced = f"{spawn.MARKER}={run_id}".encode(), f"{spawn.MARKER}={run_id}/".encode()
    found, listed = [], set()
    while new := [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if pid not in listed]:
        listed.update(new)
        for pid in new:
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(entry == given or entry.startswith(namespaced) for entry in environ) and sample.is_live(pid):
                found.append({"pid": pid, "cmdline": sample.cmdline(pid)})
    return found


_started: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _end_started_probes():
    """A probe a failed test left running is killed (its guardian reaps what it started)."""
    yield
    while _started:
        process = _started.pop()
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)


def _threads(pid: int) -> list[tuple]:
    """Where each thread of a process is (state, wait channel, syscall): what a failed wait reports."""
    return [(t["state"], t["wchan"], t["syscall"].get("name")) for t in sample.threads(pid)]


def _waited_for_a_cpu(pid: int) -> float:
    """Seconds the process's main thread has spent runnable on a run queue, waiting for a CPU (the second field
    of /proc/PID/schedstat, which a zombie keeps until it is reaped): time the machine's load took, not a wait."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


def _exited(process: subprocess.Popen, bound: float) -> None:
    """Once the process has exited, left unreaped (its /proc entry still readable), or AssertionError after bound s."""
    deadline = time.monotonic() + bound
    while os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < deadline, f"the probe still running {bound:g} s on: {_threads(process.pid)}"
        time.sleep(0.01)


def start_probe(*args: str, temporary: Path | None = None) -> tuple[subprocess.Popen, str]:
    """The CLI in a child process with a run marker of its own (SIGINT at its default, as in a terminal), its
    temporary folder temporary where given."""
    run_id = f"hostile-{uuid.uuid4().hex}"
    process = subprocess.Popen(
        [*PROBE, *args],
        cwd=ROOT,
        env={**os.environ, spawn.MARKER: run_id, **({"TMPDIR": str(temporary)} if temporary else {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _started.append(process)
    return process, run_id


def run_servers(server: Server, checks: list[str], window: float = 3.0) -> dict[str, dict]:
    runs = runner.run_servers([server], checks, Options(window))
    return {run["case"]: run for run in runs}


def _high_water_kb(pid: int) -> int:
    """The process's peak resident set so far (VmHWM, KiB), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@pytest.mark.parametrize("shape", ["flood-empty", "flood-short", "flood-line", "flood-binary"])
def test_a_flood_of_any_shape_keeps_the_probe_under_its_memory_bound(shape, tmp_path):
    """A flood is progress: each wait of S4 runs to the outer bound, so the window is BUSY_WINDOW; its arm runs
    alone (--sequential-arms), since side by side the reproduced S4 would be rerun alone, the flood watched twice."""
    out = tmp_path / "results.json"
    started = time.monotonic()
    window = f"{BUSY_WINDOW:g}"
    process, run_id = start_probe(
        "--server", hostile(shape), "--sequential-arms", "--only", "S4", "--window", window, "--out", str(out)
    )
    peak = 0  # the probe's own high-water mark (VmHWM); wait4's ru_maxrss would count the flooding server too
    while process.poll() is None:
        peak = max(peak, _high_water_kb(process.pid))
        time.sleep(0.05)
    process.communicate()
    assert process.returncode == 0 and time.monotonic() - started < 60
    assert 0 < peak < RSS_BOUND_KB, f"peak RSS {peak} KiB"
    (run,) = json.loads(out.read_text())["runs"]
    arm = run["arms"]["bug"]
    assert run["verdict"] == "reproduced", run["reason"]
    assert arm["stdout"]["lines"] > wire.KEPT_LINES or arm["stdout"]["bytes"] > 4 * wire.KEPT_CAP  # past the caps
    if shape == "flood-line":
        assert "too long to parse" in run["reason"]
    assert marked(run_id) == []


def test_answers_are_found_after_megabytes_of_start_up_chatter():
    runs = run_servers(Server("chatty", hostile("chatty")), ["S1", "S4", "S6a"])
    assert runs["S1"]["verdict"] == "not_reproduced", runs["S1"]["reason"]
    assert runs["S6a"]["verdict"] == "not_reproduced", runs["S6a"]["reason"]
    assert runs["S4"]["verdict"] == "reproduced" and "log line 0" in runs["S4"]["reason"]
    assert runs["S1"]["arms"]["bug"]["stdout"]["bytes"] > 2 * wire.KEPT_CAP


def test_a_line_nested_too_deep_to_parse_is_offending_and_the_answers_after_it_are_read():
    """json's parser recurses per level: the reader takes the RecursionError as a line it cannot parse and reads on."""
    runs = run_servers(Server("deep", hostile("deep")), ["S1", "S4"])
    assert runs["S1"]["verdict"] == "not_reproduced", runs["S1"]["reason"]
    assert runs["S4"]["verdict"] == "reproduced" and "levels, not parsed" in runs["S4"]["reason"], runs["S4"]["reason"]


def test_a_server_waiting_on_its_own_request_is_named_not_blamed():
    runs = run_servers(Server("asks", hostile("asks-client")), ["S6a"])
    assert runs["S6a"]["verdict"] == "inconclusive"
    assert "its own request sampling/createMessage" in runs["S6a"]["reason"]


def test_s2_decides_on_a_blocked_writer_whose_pipe_is_not_exactly_full():
    runs = run_servers(Server("slack", hostile("slack"), ("big", {})), ["S2"])
    bug = runs["S2"]["arms"]["bug"]
    assert runs["S2"]["verdict"] == "reproduced", runs["S2"]["reason"]
    assert 0 < bug["in_flight"]["pipe"]["buffered"] < bug["in_flight"]["pipe"]["capacity"]


def test_a_server_that_stops_reading_fails_the_arm_with_a_reason(monkeypatch):
    monkeypatch.setattr(wire, "SEND_BOUND", 1.0)
    server = Server("non-reader", hostile("non-reader"), ("big", {"x": "a" * 120_000}))
    started = time.monotonic()
    runs = run_servers(server, ["S2"])
    assert time.monotonic() - started < 15
    assert runs["S2"]["verdict"] == "error"
    assert "read none of its stdin for 1 s" in runs["S2"]["arms"]["bug"]["error"]


def test_a_pid_hopper_is_reaped_and_s5_agrees_with_its_records():
    runs = run_servers(Server("hopper", hostile("hopper")), ["S5"])
    assert runs["S5"]["verdict"] == "reproduced", runs["S5"]["reason"]
    for arm in runs["S5"]["arms"].values():
        assert arm["survivors"] and arm["reaped"] and arm["alive_after_reap"] == []


@pytest.mark.parametrize(
    ("sig", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_signals_pressed_repeatedly_end_a_blocked_run_within_2_s_in_one_line(sig, code, word, tmp_path):
    """Arms blocked writing to a non-reader, a pid hopper and a flood: five signals, one line, one exit within
    SIGNAL_BOUND. A loaded machine (CI's) can keep the probe off every CPU for seconds of its stop: the bound is
    on the probe's own time, the time its main thread (which stops the run) spent waiting for a CPU deducted."""
    out = tmp_path / "results.json"
    out.write_text("previous")
    args = ["--server", hostile("non-reader"), "--large-call", LARGE_ARGUMENT, "--server", hostile("hopper")]
    process, run_id = start_probe(*args, "--server", hostile("flood-empty"), "--window", "30", "--out", str(out))
    modes = ("non-reader", "hopper", "flood-empty")

    def running() -> set[str]:
        started = [found for found in marked(run_id) if found["pid"] != process.pid]  # its own command names all
        return {mode for found in started for mode in modes if mode in found["cmdline"]}

    # a server's arms take turns, and how many servers run at once depends on the machine: one is enough. What
    # is seen is kept: asked again, the arm that was running may have ended and the next not yet exec'd
    deadline = time.monotonic() + 60
    while not (seen := running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen, f"no server in 60 s; the probe: exit {process.poll()}, {_threads(process.pid)}, {marked(run_id)}"
    time.sleep(1.0)  # the arms are in their writes and waits
    first, queued = time.monotonic(), _waited_for_a_cpu(process.pid)
    for _ in range(5):
        process.send_signal(sig)
        time.sleep(0.05)
    _exited(process, 30)
    took, queued = time.monotonic() - first, _waited_for_a_cpu(process.pid) - queued
    _, err = process.communicate(timeout=30)
    assert took - queued < SIGNAL_BOUND, f"exit {took:.2f} s after the first signal, {queued:.2f} s of it queued"
    assert process.returncode == code
    assert err == f"{word}: every process reaped, no results written\n"
    assert marked(run_id) == [] and out.read_text() == "previous"


def test_a_signal_while_a_servers_era_is_found_ends_the_run_within_2_s(tmp_path):
    """The era probe (the first thing `server` does) waits for an opening answer a window long; a signal then
    stops the run as it does the arms': the silent server is killed, its wait ends, one line."""
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(600)\n")
    process, run_id = start_probe("--server", f"{sys.executable} {silent}", "--window", "30", "--out", "-")
    deadline = time.monotonic() + 60
    while not any("silent.py" in found["cmdline"] for found in marked(run_id) if found["pid"] != process.pid):
        assert time.monotonic() < deadline and process.poll() is None, "no server in 60 s"
        time.sleep(0.05)
    first, queued = time.monotonic(), _waited_for_a_cpu(process.pid)
    process.send_signal(signal.SIGINT)
    _exited(process, 30)
    took, queued = time.monotonic() - first, _waited_for_a_cpu(process.pid) - queued
    _, err = process.communicate(timeout=30)
    assert took - queued < SIGNAL_BOUND, f"exit {took:.2f} s after the signal, {queued:.2f} s of it queued"
    assert process.returncode == 130 and err == "interrupted: every process reaped, no results written\n", err
    assert marked(run_id) == []


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler of its own for SIGTERM (SigCgt in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.mark.parametrize(
    ("sig", "at"),
    [(signal.SIGINT, 0.05), (signal.SIGINT, 0.2), (signal.SIGINT, 0.5), (signal.SIGINT, 1.0), (signal.SIGTERM, 0.05)],
)
def test_a_signal_at_any_moment_from_the_first_instruction_on_is_one_line_and_its_code(sig, at, tmp_path):
    """A signal sent at s after the probe was started, pressed twice, from its imports to its arms: exit 130
    or 143, one line, nothing left alive, no results written. L1 by the window method runs for seconds, so
    the last moment still falls inside the run, however fast the machine.

    Never sent before the entry point's handlers are in place (SIGTERM caught, which Python itself does not
    do): before them the signal meets the interpreter's own start-up (its KeyboardInterrupt, or death by
    the signal), which no code of the probe can run in. On a loaded machine the 0.05 s signal is sent
    as soon as they are, later than 0.05 s; what is asserted is the code and the line, not the timing.
    """
    out = tmp_path / "results.json"
    started = time.monotonic()
    process, run_id = start_probe("--only", "L1", "--method", "window", "--out", str(out))
    while not _catches_sigterm(process.pid):
        assert process.poll() is None, process.communicate()
        time.sleep(0.002)
    time.sleep(max(0.0, started + at - time.monotonic()))
    for _ in range(2):
        process.send_signal(sig)
        time.sleep(0.02)
    _, err = process.communicate(timeout=30)
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert (process.returncode, err.count("\n"), err.split(":")[0]) == (128 + sig, 1, word), err
    assert marked(run_id) == [] and not out.exists()


def test_after_sigkill_of_the_probe_its_guardian_leaves_nothing_alive(tmp_path):
    """SIGKILL while a server that ignores EOF and SIGTERM is alive with its pid hopper's daemon (S1 waits its window
    on it): the guardian reaps them all, and removes the run's folder from the temporary one, before it exits (what
    is asserted once it has: on a loaded machine its scans of /proc take their time). One server holds both,
    so the moment exists whatever the load (two servers were alive together only while the hopper's arm lasted)."""
    args = ["--server", hostile("stubborn-hopper")]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    out = str(tmp_path / "r.json")
    process, run_id = start_probe(*args, "--only", "S1", "--window", "30", "--out", out, temporary=temporary)

    def daemon() -> list[int]:  # its successors: each in the daemon's session, never leading one (the server leads)
        servers = [found["pid"] for found in marked(run_id) if "stubborn-hopper" in found["cmdline"]]
        return [pid for pid in servers if pid != process.pid and sample.session_id(pid) not in (pid, None)]

    deadline = time.monotonic() + 60
    while not daemon():
        assert time.monotonic() < deadline, marked(run_id)
        time.sleep(0.05)
    assert [entry.name[: len("probe-run-")] for entry in temporary.iterdir()] == ["probe-run-"]
    pids = map(int, filter(str.isdigit, os.listdir("/proc")))  # every process's parent read: not the children lists
    guardians = [p for p in pids if sample.parent_pid(p) == process.pid and "core.guardian" in sample.cmdline(p)]
    assert len(guardians) == 1, (guardians, _threads(process.pid))
    (guardian,) = guardians
    guardian_fd = os.pidfd_open(guardian)  # only waited on: readable once it has exited
    try:
        process.kill()
        process.communicate(timeout=10)
        ended = select.select([guardian_fd], [], [], GUARDIAN_BOUND)[0]
    finally:
        os.close(guardian_fd)
    assert ended, f"the guardian still running {GUARDIAN_BOUND:g} s after the probe's SIGKILL: {_threads(guardian)}"
    assert marked(run_id) == []
    assert list(temporary.iterdir()) == []


def test_a_server_and_a_label_with_esc_control_characters_and_invalid_utf8_give_well_formed_outputs(tmp_path):
    """A server that writes ESC sequences, control characters and invalid UTF-8 to stdout and stderr, run
    through a program whose name (its default label) holds ESC and a byte that is not UTF-8: JUnit and SVG
    parse, and the report and -v's evidence show every such character escaped."""
    program = os.path.join(os.fsencode(tmp_path), b"py\x1b[31m\xff")
    os.symlink(sys.executable, program)
    junit, svg = tmp_path / "j.xml", tmp_path / "s.svg"
    command = f"{os.fsdecode(program)} {HOSTILE} garbled"
    args = ["server", command, "--only", "S4,S1", "--window", "3", "-v", "--junit", str(junit), "--svg", str(svg)]
    process, run_id = start_probe(*args, "--out", str(tmp_path / "r.json"))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    root = ET.parse(junit).getroot()
    assert {case.get("classname") for case in root.iter("testcase")} == {"py\\x1b[31m\\udcff"}
    ET.parse(svg)
    assert "py\\x1b[31m\\udcff" in out and "\\x01bell\\x07" in out  # the label, and -v's evidence of S4
    for text in (out, err, junit.read_text(), svg.read_text()):
        assert not model.UNPRINTABLE.search(text), text
    assert marked(run_id) == []


DEEP = "[" * 100_000 + "]" * 100_000


def _results_file(path: Path, verdict: object) -> Path:
    run = {"case": "S1", "server": {"label": "x", "command": "x"}, "verdict": verdict, "reason": "r", "arms": {}}
    run["mitigation"] = {"held": None, "note": "n"}
    path.write_text(json.dumps({"schema_version": 7, "metadata": {}, "runs": [run]}))
    return path


@pytest.mark.parametrize(
    "shape",
    [
        "deep --expect",
        "deep --compare",
        "deep --merge",
        "deep --large-call",
        "number verdict",
        "list verdict",
        "null verdict",
        "fifo --expect",
        "fifo --compare",
        "fifo --merge",
        "fifo --out",
    ],
)
def test_malformed_input_of_any_shape_is_one_line_and_exit_2(shape, tmp_path):
    deep, fifo = tmp_path / "deep.json", tmp_path / "fifo"
    deep.write_text(DEEP)
    os.mkfifo(fifo)
    good = _results_file(tmp_path / "good.json", "reproduced")
    server = ["--server", f"{sys.executable} {HOSTILE}"]
    args = {
        "deep --expect": [*server, "--expect", str(deep)],
        "deep --compare": ["--compare", str(deep), str(good)],
        "deep --merge": ["--merge", str(tmp_path / "m.json"), str(deep)],
        "deep --large-call": [*server, "--large-call", f't {{"a": {DEEP[:50_000]}{DEEP[-50_000:]}}}'],
        "number verdict": ["--compare", str(_results_file(tmp_path / "n.json", 3)), str(good)],
        "list verdict": ["--compare", str(_results_file(tmp_path / "l.json", ["a"])), str(good)],
        "null verdict": ["--compare", str(_results_file(tmp_path / "z.json", None)), str(good)],
        "fifo --expect": [*server, "--expect", str(fifo)],
        "fifo --compare": ["--compare", str(fifo), str(good)],
        "fifo --merge": ["--merge", str(tmp_path / "m.json"), str(fifo)],
        "fifo --out": [*server, "--out", str(fifo)],
    }[shape]
    done = subprocess.run([*PROBE, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "m.json").exists()


def _no_bigger_files(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_is_one_line_exit_4_and_the_old_file_kept(tmp_path):
    out = tmp_path / "results.json"
    out.write_text("previous")
    done = subprocess.run(
        [*PROBE, "--server", hostile("chatty"), "--only", "S1", "--window", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        preexec_fn=lambda: _no_bigger_files(1000),
    )
    assert done.returncode == cli.EXIT_INTERNAL, done.stderr
    assert done.stderr.count("\n") == 1 and "File too large" in done.stderr, done.stderr
    assert out.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no half-written file beside it


def test_a_closed_stdout_is_one_line_exit_4():
    process, run_id = start_probe("--server", hostile("chatty"), "--only", "S1", "--window", "2", "--out", "-")
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(60) == cli.EXIT_INTERNAL, err
    assert "Broken pipe" in err and "Traceback" not in err and err.count("error:") == 1
    assert marked(run_id) == []


def test_a_run_where_no_sdk_could_be_made_ready_exits_4(monkeypatch, tmp_path, capsys):
    failed = runner.unavailable("9.9.9", {"source": "pypi"}, ["L1"], "SDK unavailable: test")
    monkeypatch.setattr(cli, "prepare_sdks", lambda *a: ([], failed))
    assert cli.main(["--only", "L1", "--out", str(tmp_path / "r.json")]) == cli.EXIT_INTERNAL
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["verdict"] == "error"


def test_a_kernel_without_pidfd_is_one_line_and_exit_2_before_any_spawn(monkeypatch, tmp_path, capsys):
    """Every signal goes through a pidfd: a kernel before 5.3 could stop nothing, so the probe refuses to start.
    (A kernel without pidfd_open is not to be had here: the call is made to fail as it would there.)"""

    def no_pidfd(pid: int, flags: int = 0) -> int:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    monkeypatch.setattr(cli, "prepare_sdks", lambda *a: pytest.fail("an SDK prepared on a kernel without pidfd"))
    assert cli.main(["--only", "L1", "--out", str(tmp_path / "r.json")]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no pidfd_open" in err, err
    assert not (tmp_path / "r.json").exists()

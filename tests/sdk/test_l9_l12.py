"""L9 and L12 on the pinned SDK (the raw facts their notes come from), and on SDK copies fixed another way.

Each case's first fix (tests/sdk_fixes.py FIXES) runs with both methods in test_honesty.py; the other
fixes run here, with both methods too.
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import asynccontextmanager

import anyio
import pytest

from stdio_probe.core import sample
from stdio_probe.core.host_contract import end_server_group, process_exited
from stdio_probe.core.model import Options
from stdio_probe.sdk.cases import l9_descendants
from tests.bounded import read_line

OTHER_FIXES = {"L9-before-wait": "L9", "L12-default-sigint": "L12"}
WINDOW = Options(method="window", window=3.0)  # the window method, with a shorter window than the default 10 s


@pytest.mark.parametrize("method", ["fast", "window"])
@pytest.mark.parametrize("fix", list(OTHER_FIXES))
def test_each_other_fix_is_seen_by_both_methods(fix, method, fixed, run_cases):
    case_id = OTHER_FIXES[fix]
    run = run_cases(fixed(fix), [case_id], Options(method=method) if method == "fast" else WINDOW)[case_id]
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["mitigation"]["held"] is True, run["mitigation"]["note"]


def test_pinned_reproduces_with_the_window_method(pinned, run_cases):
    runs = run_cases(pinned, ["L9", "L12"], WINDOW)
    for case_id, run in runs.items():
        assert run["verdict"] == "reproduced", (case_id, run["reason"])
    assert {s["decided_by"] for s in runs["L12"]["arms"]["bug"]["sigints"][:2]} == {"window"}


@pytest.mark.parametrize("method", ["fast", "window"])
def test_pinned_reproduces_l12_when_the_probe_ignores_sigint(pinned, run_cases, method):
    """A probe run as a background job (SIGINT ignored, which an exec passes on): its fixture, forked or exec'd,
    still starts with SIGINT as from a shell, so the SDK's own handling of it is what the case sees."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        run = run_cases(pinned, ["L12"], Options() if method == "fast" else WINDOW)["L12"]
    finally:
        signal.signal(signal.SIGINT, before)
    assert run["verdict"] == "reproduced", run["reason"]
    assert run["arms"]["control"]["sigints"][0]["exit_code"] == -signal.SIGINT, "the control ends by SIGINT"


def _left(runs: dict, arm: str) -> dict:
    return l9_descendants.left_facts(runs["L9"]["arms"][arm])


def test_l9_the_descendant_outlives_a_server_that_exits_by_itself(runs):
    bug = _left(runs, "bug")
    assert bug["server"]["stdin_eof_logged"] and bug["server"]["signals"] == []
    # the driver and what is left, blocked: proven, or (a loaded machine) a window without progress first
    assert runs["L9"]["arms"]["bug"]["stuck"]["decided_by"] in ("proof", "window")
    [survivor] = bug["survivors"]
    assert survivor["pid"] == bug["descendant"] and survivor["cmdline"].startswith("sleep ")
    assert survivor["ppid"] != bug["server"]["pid"], "re-parented once its server exited"
    reaped = runs["L9"]["arms"]["bug"]["reaped_after_arm"]
    assert [p["pid"] for p in reaped] == [bug["descendant"]], "the probe reaps what the SDK left behind"
    control = _left(runs, "control")
    # The SDK's 2 s grace starts when it closes stdin, a moment before the server reads EOF and logs it
    # (1.991 s in one CI run): a signal inside the grace would read well under 1.9 s.
    assert control["server"]["signals"] == ["SIGTERM"] and control["left_after_eof_s"] >= 1.9
    for arm in ("control", "mitigated"):
        facts = _left(runs, arm)
        assert facts["survivors"] == [] and facts["gone_after_s"] is not None
        assert runs["L9"]["arms"][arm]["reaped_after_arm"] == []
    assert _left(runs, "mitigated")["server"]["signals"] == [], "the server still exited by itself"


@asynccontextmanager
async def _server_in_our_group():
    """A stand-in for an SDK before mcp 1.11: the server in the host's own process group, with a background
    descendant; it exits when its stdin closes, as the transport's exit closes it."""
    line = "sleep 30 </dev/null >/dev/null 2>&1 & echo $!; read x"
    server = subprocess.Popen(["sh", "-c", line], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield int(read_line(server.stdout))
    finally:
        server.stdin.close()
        server.wait(5)
        server.stdout.close()


def test_end_server_group_in_the_hosts_group_signals_only_what_joined_it():
    before = subprocess.Popen(["sleep", "30"])  # in our group already: must be left alone
    try:
        assert os.getpgid(before.pid) == os.getpgrp()

        async def main() -> int:
            async with end_server_group(_server_in_our_group()) as descendant:
                assert os.getpgid(descendant) == os.getpgrp()
                return descendant

        descendant = anyio.run(main)
        assert process_exited(descendant), sample.proc_state(descendant)
        assert before.poll() is None, "a member of the host's group from before was signalled"
    finally:
        before.kill()
        before.wait(5)


def test_l12_sigint_ends_the_server_only_the_third_time_while_stdin_is_open(runs):
    bug = runs["L12"]["arms"]["bug"]
    assert bug["idle"] and bug["thread_in_stdin_read"] and bug["stdin_open"]
    first, second, third = bug["sigints"]
    for step in (first, second):
        assert (step["outcome"], step["decided_by"]) == ("running", "proof"), step
        assert "anon_pipe_read" in {t["wchan"] for t in step["threads"]}, "a thread still reads the stdin pipe"
    # each sent once the main thread was asleep: none handled with the next, as one (l12_sigint.main_asleep)
    assert all(step["main_asleep"] for step in bug["sigints"]), bug["sigints"]
    assert third["outcome"] == "exited" and third["exit_code"] == -2, third
    control = runs["L12"]["arms"]["control"]
    assert control["read_stream_ended"] and [s["outcome"] for s in control["sigints"]] == ["exited"]
    mitigated = runs["L12"]["arms"]["mitigated"]
    assert [s["outcome"] for s in mitigated["sigints"]] == ["running"], "the bug's trigger, before the contract"
    # once its stdin is closed the reader returns, and the first SIGINT's KeyboardInterrupt ends it: by itself, -2
    assert mitigated["shutdown"]["ended_by"] == "self" and mitigated["exit_code"] == -2

"""Each host-contract helper, against the real pinned SDK and against a child that ignores SIGTERM."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time

import anyio
import pytest

from stdio_probe.core import host_contract, sample, wire
from stdio_probe.core.decide import mitigation
from stdio_probe.core.host_contract import (
    Pidfd,
    ServerExited,
    child_pids,
    connect_or_close,
    fail_when_exits,
    run_connection,
    sanitize_outbound,
    shutdown_child,
    spawned_server,
)
from stdio_probe.core.model import Options
from stdio_probe.core.spawn import current
from stdio_probe.sdk import envs
from stdio_probe.sdk.cases import l1_full_pipe, l2_surrogate, l3_rejected_connect, l4_ghost_tools
from stdio_probe.sdk.driver import checkpoint
from stdio_probe.sdk.sdk import Request, resolve
from tests.bounded import read_line

FAST = Options(window=10.0, method="fast")


def _stubborn(pinned, *args: str):
    """A child that ignores stdin EOF (and SIGTERM with --ignore-sigterm), once it says it is ready."""
    child = current().spawn(pinned.python, "fixture_stubborn.py", list(args), {})
    assert read_line(child.process.stdout) == b"ready\n"
    return child


def _pipe_fills(fd: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fill = sample.pipe_fill(fd)
        if fill["buffered"] >= fill["capacity"]:
            return True
        time.sleep(0.01)
    return False


def test_shutdown_drains_the_real_sdk_server_until_it_exits_by_itself(pinned):
    """L1's trigger: a response bigger than the pipe, stdout unread; the helper's drain lets it exit 0."""
    payload = ["--payload-bytes", str(l1_full_pipe.PAYLOAD_BYTES)]
    child = current().spawn(pinned.python, "fixture_stdio_writer.py", payload, {})
    try:
        wire.send(child, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert _pipe_fills(child.process.stdout.fileno(), timeout=10.0), "the response never filled the pipe"
        done = shutdown_child(child.process, exit_bound=5.0, term_bound=1.0)
    finally:
        child.stop()
    assert (done.ended_by, done.exit_code, done.stdout_eof) == ("self", 0, True), done
    assert done.stdout_bytes > l1_full_pipe.PAYLOAD_BYTES
    assert [step for step, _ in done.steps] == ["close stdin", "exited"]


@pytest.mark.parametrize(
    "args, term_bound, ended_by, code, steps, logged",
    [
        ((), 2.0, "SIGTERM", -15, ["close stdin", "SIGTERM", "exited"], "sending SIGTERM"),
        (
            ("--ignore-sigterm",),
            0.3,
            "SIGKILL",
            -9,
            ["close stdin", "SIGTERM", "SIGKILL", "exited"],
            ": ended by SIGKILL",
        ),
    ],
    ids=["eof-ignored-sigterm-ends-it", "sigterm-ignored-sigkill-ends-it-and-says-so"],
)
def test_shutdown_escalates_on_its_bounds(pinned, caplog, args, term_bound, ended_by, code, steps, logged):
    child = _stubborn(pinned, *args)
    try:
        with caplog.at_level(logging.WARNING, logger="stdio_probe.core.host_contract"):
            done = shutdown_child(child.process, exit_bound=0.3, term_bound=term_bound)
    finally:
        child.stop()
    assert (done.ended_by, done.exit_code) == (ended_by, code), done
    assert [step for step, _ in done.steps] == steps
    assert any(f"pid {child.pid}" in message and logged in message for message in caplog.messages)


def test_connect_or_close_closes_the_rejected_transport_of_the_real_sdk(pinned):
    record = l3_rejected_connect.run_arm("mitigated", pinned, FAST)
    after = checkpoint(record, "after_second_connect")
    assert after["facts"]["error"].startswith("MCPError"), after
    assert after["facts"]["notes"] == ["host_contract: closed 1 transport(s) the rejected connect opened"]
    assert (after["facts"]["sessions"], len(after["children"])) == (1, 1)


def test_connect_or_close_says_so_when_the_group_keeps_no_handle():
    """On an SDK whose group has no _session_exit_stacks the rule cannot hold: the error says so."""

    class Group:
        sessions: list = []

        async def connect_to_server(self, server_params: object, session_params: object = None) -> None:
            raise ValueError("rejected")

    with pytest.raises(ValueError) as info:
        asyncio.run(connect_or_close(Group(), object()))
    assert "close the group to reclaim" in info.value.__notes__[0]


def test_connect_or_close_holds_on_a_1x_sdk_whose_connect_takes_one_argument():
    """mcp 1.x's connect_to_server(server_params) has no session_params: the rule must not pass one
    (it failed with a TypeError on every 1.x release, reported as no evidence). A real 1.x release."""
    sdk = resolve(Request("1.13.0", "pypi", "1.13.0"), envs.default_cache())
    arms = {arm: l3_rejected_connect.run_arm(arm, sdk, FAST) for arm in ("bug", "control", "mitigated")}
    after = checkpoint(arms["mitigated"], "after_second_connect")
    assert after["facts"]["notes"] == ["host_contract: closed 1 transport(s) the rejected connect opened"], after
    assert mitigation(l3_rejected_connect, arms)["status"] == "held"


def test_disconnect_verified_removes_the_ghosts_of_the_real_sdk(pinned):
    record = l4_ghost_tools.run_arm("mitigated", pinned, FAST)
    registered, after = checkpoint(record, "after_registration"), checkpoint(record, "after_disconnect")
    assert registered["facts"]["tools"] == ["new", "old"]
    assert (after["facts"]["ghosts_removed"], after["facts"]["tools"]) == (["old"], [])


def test_sanitize_outbound_replaces_every_lone_surrogate_and_nothing_else():
    bad = "bad-\udcff-name"
    payload = {"uri": bad, bad: [bad, ("\ud800", 1)], "ok": "naïve ✓ 𝄞", "n": None}
    clean = sanitize_outbound(payload)
    assert clean == {
        "uri": "bad-\ufffd-name",
        "bad-\ufffd-name": ["bad-\ufffd-name", ("\ufffd", 1)],
        "ok": "naïve ✓ 𝄞",
        "n": None,
    }
    json.dumps(clean, ensure_ascii=False).encode("utf-8")  # the step that fails inside the SDK's writer


def test_sanitized_payload_passes_the_real_sdk_writer_and_the_session_lives(pinned):
    record = l2_surrogate.run_arm("mitigated", pinned, FAST)
    [response] = [m for m in record["messages"] if m.get("id") == 1]
    assert response["result"]["uri"] == "bad-\ufffd-name"
    assert record["valid_message_arrived"] and record["exit_code"] == 0, record["stderr"]


def test_host_contract_imports_without_mcp():
    """The parent probe imports it and must never import mcp."""
    code = "import sys, stdio_probe.core.host_contract; sys.exit('mcp' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0


def test_spawned_server_is_the_one_new_child_and_fail_when_exits_fails_the_block():
    """L8's helpers on a plain child that exits mid-block (the SDK-side proof is L8's mitigated arm)."""
    before = child_pids()
    with pytest.raises(LookupError):
        spawned_server(before)
    child = subprocess.Popen(["sleep", "0.3"], start_new_session=True)
    try:
        pid = spawned_server(before)
        assert pid == child.pid

        async def body() -> float:
            started = time.monotonic()
            with pytest.raises(ServerExited) as info:
                async with fail_when_exits(pid, poll=0.02):
                    await anyio.sleep(10)
            assert info.value.pid == pid
            return time.monotonic() - started

        assert anyio.run(body) < 5.0, "the block ends once the child has exited, not at its own 10 s"
    finally:
        child.kill()
        child.wait()


def test_fail_when_exits_raises_what_the_body_raised_unwrapped():
    async def body() -> None:
        async with fail_when_exits(os.getpid()):
            raise KeyError("from the body")

    with pytest.raises(KeyError):
        anyio.run(body)


def test_run_connection_returns_the_body_result():
    async def body() -> str:
        return "done"

    assert asyncio.run(run_connection(body)) == "done"


def test_a_group_is_signalled_through_its_leaders_pidfd_after_the_leader_is_reaped():
    """The leader exits and is reaped; its group still holds a member, which the leader's pidfd reaches."""
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; exit 0"], stdout=subprocess.PIPE, start_new_session=True
    )
    pidfd = Pidfd.open(leader.pid)
    member = int(leader.stdout.readline())
    leader.wait()  # reaped: its number is free for anyone now
    member_fd = Pidfd.open(member, lambda pid: host_contract._group_of(pid) == leader.pid)
    try:
        assert member_fd is not None and not member_fd.exited()
        assert pidfd.signal(signal.SIGKILL) is False  # the leader itself is gone
        assert pidfd.signal_group(signal.SIGKILL) is True
        deadline = time.monotonic() + 10
        while not member_fd.exited() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert member_fd.exited()
    finally:
        pidfd.close()
        if member_fd is not None:
            member_fd.signal(signal.SIGKILL)
            member_fd.close()
        leader.stdout.close()


def test_a_pidfd_is_refused_for_a_process_that_is_not_ours():
    """ours() is read once the pidfd is open: a process it does not accept is never held."""
    assert Pidfd.open(os.getpid(), lambda pid: False) is None
    held = Pidfd.open(os.getpid(), lambda pid: True)
    assert held is not None and held.signal(0)
    held.close()
    assert held.signal(0) is False  # closed: holds nothing

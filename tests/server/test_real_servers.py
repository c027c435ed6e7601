"""The server checks against real servers nobody here wrote (tests/third_party.py installs them once).

mcp-server-git (Python, mcp 2.3.0) with git_log of a generated 1,500-commit repository, and
@modelcontextprotocol/server-filesystem (TypeScript, Node) with read_text_file of a 540 KB file:
both stay alive after stdin EOF while that answer is unread (S2 reproduced), and both exit on an
idle EOF (S1 not reproduced), as mcp-server-time does. A server wrapped as
sh -c 'sleep 60 & exec SERVER' leaves the sleep behind (S5 reproduced), and nothing of any run
is left alive (conftest's guard, and the checks' own records). A call in flight at stdin EOF
(S13): the pinned SDK's MCPServer cancels it, the TypeScript SDK's server finishes it
(tests/servers/, their slow tool).
"""

from __future__ import annotations

import shlex
import shutil

import pytest

from stdio_probe.core import runner
from stdio_probe.core.model import Options, Server
from stdio_probe.server.checks import CHECKS
from tests import third_party
from tests.paths import TESTS

pytestmark = pytest.mark.network  # the servers come from PyPI and npm (tests/third_party.py caches them)
WINDOW = 6.0  # git's server takes up to about 2 s to exit on EOF on a loaded machine
SERVERS = TESTS / "servers"
SLOW = ("slow", {"seconds": 0.5})


@pytest.fixture(scope="session")
def python_bin():
    try:
        return third_party.python_servers()
    except third_party.Unavailable as exc:
        pytest.skip(str(exc))


def _run(servers: list[Server], check_ids: list[str]) -> dict[tuple[str, str], dict]:
    runs = runner.run_servers(servers, check_ids, Options(WINDOW))
    return {(run["server"]["label"], run["case"]): run for run in runs}


@pytest.fixture(scope="module")
def python_runs(python_bin, tmp_path_factory):
    repo = third_party.git_repo(tmp_path_factory.mktemp("repo") / "repo")
    call = ("git_log", {"repo_path": str(repo), "max_count": third_party.LOG_COMMITS})
    servers = [
        Server("git", f"{python_bin / 'mcp-server-git'} --repository {repo}", call),
        Server("time", str(python_bin / "mcp-server-time")),
    ]
    return _run(servers, list(CHECKS))


def test_git_server_hangs_on_eof_with_a_large_answer_unread(python_runs):
    run = python_runs[("git", "S2")]
    assert run["verdict"] == "reproduced", run["reason"]
    assert run["arms"]["control"]["in_flight"]["bytes_received"] > 300_000  # the answer: about 317 KB
    assert run["arms"]["control"]["exit_code"] == 0


@pytest.mark.parametrize("label", ["git", "time"])
def test_python_servers_exit_on_idle_eof(python_runs, label):
    run = python_runs[(label, "S1")]
    assert run["verdict"] == "not_reproduced", run["reason"]
    assert run["arms"]["bug"]["exit_code"] == 0


def test_time_server_without_a_large_call_is_not_applicable_for_s2(python_runs):
    assert python_runs[("time", "S2")]["verdict"] == "not_applicable"


def test_a_descendant_left_by_a_wrapped_server_is_found_and_reaped(python_bin):
    wrapped = f"sh -c {shlex.quote('sleep 60 & exec ' + str(python_bin / 'mcp-server-time'))}"
    run = _run([Server("wrapped", wrapped)], ["S5"])[("wrapped", "S5")]
    assert run["verdict"] == "reproduced", run["reason"]
    for arm in run["arms"].values():
        assert [p["cmdline"] for p in arm["survivors"]] == ["sleep 60"] and arm["alive_after_reap"] == []


@pytest.mark.node
def test_filesystem_server_hangs_on_eof_with_a_large_answer_unread(tmp_path):
    try:
        command = third_party.filesystem_server(tmp_path)
    except third_party.Unavailable as exc:
        pytest.skip(str(exc))
    big = third_party.text_file(tmp_path / "big.txt")
    runs = _run([Server("filesystem", command, ("read_text_file", {"path": str(big)}))], ["S1", "S2"])
    assert runs[("filesystem", "S1")]["verdict"] == "not_reproduced", runs[("filesystem", "S1")]["reason"]
    s2 = runs[("filesystem", "S2")]
    assert s2["verdict"] == "reproduced", s2["reason"]
    assert s2["arms"]["control"]["in_flight"]["bytes_received"] > third_party.TEXT_FILE_BYTES


def test_the_sdks_mcpserver_answers_a_call_in_flight_at_eof_with_an_error(pinned):
    """python-sdk #2678 on the pinned mcp: slow(0.5), stdin closed 0.05 s later, is answered "Connection closed"
    and the server exits 0; the same call with stdin closed after its answer gets the tool's result."""
    server = Server("MCPServer", f"{pinned.python} {SERVERS / 'py_mcpserver.py'}", slow_call=SLOW)
    run = _run([server], ["S13"])[("MCPServer", "S13")]
    assert run["verdict"] == "reproduced", run["reason"]
    bug, control = run["arms"]["bug"], run["arms"]["control"]
    assert bug["answer"] == {"kind": "error", "text": "error -32000 Connection closed"} and bug["exit_code"] == 0
    assert control["answer"] == {"kind": "result", "text": "result 'slept 0.5 s'"} and control["exit_code"] == 0


@pytest.mark.node
def test_the_ts_sdks_server_finishes_a_call_in_flight_at_eof():
    try:
        npm = third_party.npm_servers()
    except third_party.Unavailable as exc:
        pytest.skip(str(exc))
    server = Server("ts-sdk", f"{shutil.which('node')} {SERVERS / 'ts_sdk_server.mjs'} {npm}", slow_call=SLOW)
    run = _run([server], ["S13"])[("ts-sdk", "S13")]
    assert run["verdict"] == "not_reproduced", run["reason"]
    bug = run["arms"]["bug"]
    assert bug["answer"] == {"kind": "result", "text": "result 'slept 0.5 s'"} and not bug["answered_before_eof"]


@pytest.mark.node
def test_filesystem_server_answers_no_invalid_request_and_stdout_end_decides(tmp_path):
    """typescript-sdk #2247, #563: the TS SDK's transport hands an invalid line to onerror, never to the peer.
    Node is never proven idle (libuv reads stdin in epoll): the answers are final once stdout ends after EOF."""
    try:
        command = third_party.filesystem_server(tmp_path)
    except third_party.Unavailable as exc:
        pytest.skip(str(exc))
    run = _run([Server("filesystem", command)], ["S12"])[("filesystem", "S12")]
    assert run["verdict"] == "reproduced", run["reason"]
    bug = run["arms"]["bug"]
    assert bug["settled_by"] == "stdout_end" and bug["decided_by"] == "window"
    unanswered = {frame["name"] for frame in bug["frames"] if frame["answer"] == "no answer"}
    assert {"no jsonrpc", "method_", "not JSON"} <= unanswered, bug["frames"]
    assert {frame["answer"] for frame in run["arms"]["control"]["frames"]} == {"result"}

"""Each recipe under examples/hosts/ makes its real host follow the host contract (tests/third_party_hosts.py
installs the hosts, pinned, once).

The host runs its recipe against tests/host_standin.py, a stdlib server that logs every message it
receives, stdin EOF and signals to a file named in its argv. The contract holds when the host
exits 0 by itself, the log shows the handshake (initialize, or server/discover first), tools/list,
exactly one tools/call of probe with no arguments, then EOF on the server's stdin before any signal.
What a host does beyond that (bounds, escalation, descendants) is the host checks' business.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stdio_probe.core import spawn
from stdio_probe.core.host_contract import Pidfd
from tests import third_party_hosts
from tests.paths import TESTS
from tests.third_party import Unavailable
from tests.third_party_hosts import HOSTS, RECIPES, Host, HostPin

STANDIN = TESTS / "host_standin.py"
HOST_TIMEOUT = 120.0  # a framework's imports alone take 15 s on a loaded 2-core machine
EOF_GRACE = 5.0  # a host may close the server's stdin only as it exits (the kernel closes its fds)


def _param(pin: HostPin):
    marks = [pytest.mark.network] + ([pytest.mark.node] if pin.registry == "npm" else [])
    return pytest.param(pin, id=pin.label, marks=marks)


def _installed(pin: HostPin) -> Host:
    if pin.registry == "npm" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    try:
        return third_party_hosts.host(pin)
    except Unavailable as exc:
        pytest.skip(str(exc))


def _events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _run_host(host: Host, log: Path) -> subprocess.CompletedProcess:
    """The host run once against the stand-in; whatever is left of its session is killed at the end."""
    argv = host.argv([sys.executable, str(STANDIN), "--log", str(log)])
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=spawn.child_env({}),  # the run's marker: conftest's guard sees what the host leaves alive
    )
    held = Pidfd.open(process.pid)  # our child, not reaped yet: the number is still its own
    assert held is not None, "no pidfd on this kernel (Linux 5.3 or later)"
    try:
        out, err = process.communicate(timeout=HOST_TIMEOUT)
    except subprocess.TimeoutExpired:
        held.signal_group(signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{host.name} did not exit within {HOST_TIMEOUT} s: {err.decode(errors='replace')[-800:]}")
    finally:
        deadline = time.monotonic() + EOF_GRACE
        while not any(e["event"] == "exit" for e in _events(log)) and time.monotonic() < deadline:
            time.sleep(0.05)
        held.signal_group(signal.SIGKILL)  # what is left of the host's group: the pidfd names it once it is reaped
        held.close()
        spawn.current().reap_all()  # what else carries the run's marker (the stand-in servers), each by a pidfd
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def contract_problems(events: list[dict]) -> list[str]:
    """What the stand-in's log shows missing from the host contract (nothing: the contract held)."""
    methods = [e["method"] for e in events if e["event"] == "message"]
    kinds = [e["event"] for e in events]
    calls = [e for e in events if e.get("method") == "tools/call"]
    problems = []
    if not methods or methods[0] not in ("initialize", "server/discover") or "initialize" not in methods:
        problems.append("no handshake first")  # the stand-in refuses server/discover: a host falls back
    if len(calls) != 1 or calls[0]["params"].get("name") != "probe" or calls[0]["params"].get("arguments"):
        problems.append("not one tools/call of probe without arguments")
    elif "tools/list" not in methods[: methods.index("tools/call")]:
        problems.append("no tools/list before the call")
    if "eof" not in kinds:
        problems.append("stdin never closed")
    elif "signal" in kinds[: kinds.index("eof")] or (calls and events.index(calls[0]) > kinds.index("eof")):
        problems.append("stdin not closed after the call and before any signal")
    return problems


@pytest.mark.parametrize("pin", [_param(pin) for pin in HOSTS])
def test_recipe_follows_the_host_contract(pin, tmp_path):
    host = _installed(pin)
    log = tmp_path / "events.jsonl"
    done = _run_host(host, log)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-800:]
    events = _events(log)
    assert contract_problems(events) == [], [(e["event"], e.get("method")) for e in events]


def _log(*items: str) -> list[dict]:
    """A stand-in log in short: "eof", "signal", or a method ("tools/call" calls probe)."""
    events: list[dict] = [{"event": "start", "pid": 1}]
    for item in items:
        if item in ("eof", "signal"):
            events.append({"event": item})
        else:
            params = {"name": "probe", "arguments": {}} if item == "tools/call" else {}
            events.append({"event": "message", "method": item, "id": len(events), "params": params})
    return events


@pytest.mark.parametrize(
    "items, problem",
    [
        (("initialize", "tools/list", "tools/call", "eof"), None),
        (("server/discover", "initialize", "tools/list", "tools/call", "eof"), None),
        (("tools/list", "tools/call", "eof"), "no handshake first"),
        (("initialize", "tools/call", "eof"), "no tools/list before the call"),
        (("initialize", "tools/list", "tools/call", "tools/call", "eof"), "not one tools/call of probe"),
        (("initialize", "tools/list", "tools/call"), "stdin never closed"),
        (("initialize", "tools/list", "tools/call", "signal", "eof"), "stdin not closed after the call"),
    ],
)
def test_contract_problems_name_what_is_missing(items, problem):
    problems = contract_problems(_log(*items))
    assert problems == [] if problem is None else any(p.startswith(problem) for p in problems), problems


def test_recipe_fails_with_one_line_and_a_non_zero_exit(tmp_path):
    """A server that does not exist: the recipe reports it on one line and exits non-zero."""
    pin = next(p for p in HOSTS if p.label == "python-sdk-2.2.0")
    host = _installed(pin)
    done = subprocess.run(host.argv([str(tmp_path / "no-such-server")]), capture_output=True, timeout=HOST_TIMEOUT)
    assert done.returncode == 1
    assert len(done.stderr.decode().strip().splitlines()) == 1, done.stderr


def test_argv_replaces_the_server_word_with_its_words():
    host = Host("h", "p", "1", (), "r", "env A=1 node 'a recipe.cjs' {server} --after")
    assert host.argv(["py", "s.py"]) == ["env", "A=1", "node", "a recipe.cjs", "py", "s.py", "--after"]


def test_probe_arguments_name_each_host_by_its_label():
    chosen = [Host("ts-1.2", "p", "1.2", (), "r", "node r.cjs {server}"), Host("py-3", "q", "3", (), "r", "py {s}")]
    arguments = third_party_hosts.probe_arguments(chosen)
    assert arguments == ["--host", "node r.cjs {server}", "--name", "ts-1.2", "--host", "py {s}", "--name", "py-3"]


def test_readme_table_lists_the_pinned_hosts():
    """examples/hosts/README.md's table (recipe, host, package, version, runs on) is HOSTS, row for row."""
    rows = [
        [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        for line in (RECIPES / "README.md").read_text().splitlines()
        if line.startswith("| `")
    ]
    wanted = [[pin.recipe, pin.name, pin.package, pin.version, ", ".join(pin.requires) or "-"] for pin in HOSTS]
    assert [row[:5] for row in rows] == wanted


def test_every_recipe_says_its_host_version_and_how_to_run_it():
    for pin in HOSTS:
        header = (RECIPES / pin.recipe).read_text()[:1500]
        assert re.search(rf"pinned .*\b{re.escape(pin.version)}\b", header), pin.recipe
        assert "Run:" in header and "Adapts:" in header, pin.recipe

"""The server checks in both protocol eras (stdio_probe.core.eras): the era found per server, every check a
real verdict in each, --protocol forcing one, and the Python SDK's own MCPServer spoken to in both.

The stdlib fixture server speaks legacy (default), 2026-07-28 only (--era modern) or both; a legacy
one answers server/discover as the real ones do (--on-discover: -32601, -32602, silence, exit).
Every test also passes conftest's guard: no process of the run is left alive.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from stdio_probe.cli import main as cli
from stdio_probe.core import eras, runner, spawn
from stdio_probe.core.model import Options, Server
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.sdk.sdk import Request, SdkError, resolve
from stdio_probe.server.checks import CHECKS
from tests.cli_run import assert_fits, probe
from tests.fixture_commands import BUG, OK, SHAPES, SLOW, WINDOW, command, shape_windows
from tests.proof_readings import differing

API_FIXTURE = spawn.FIXTURES / "fixture_server_api.py"
LEGACY_ONLY = {"answers a notification": "2026-07-28 has no notifications/initialized for it to answer"}


def run_servers(servers: list[Server], checks: list[str] | None = None, window: float = WINDOW) -> dict:
    runs = runner.run_servers(servers, checks or list(CHECKS), Options(window))
    return {(run["server"]["label"], run["case"]): run for run in runs}


def verdicts(runs: dict, label: str) -> dict:
    return {case: run["verdict"] for (name, case), run in runs.items() if name == label}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_defect_shape_shows_in_its_checks_in_the_modern_era(shape):
    """Each defect shape runs the checks its defect shows in, the well-behaved shape every check: what a check
    does differently in this era is what it sends (its opening and liveness requests, the modern envelope), which
    each of these runs sends; that no other check misreads a defect is the same code in either era, and
    test_server_checks shows it for every shape and every check in the legacy era (the fixture's default).

    A server of both eras is not run here: it is found modern (test_the_era_is_found_once_per_server_and_every_arm_
    speaks_it), and every request a check sends it then carries the modern envelope, or is refused before any era
    is read (S6's lines, S12's invalid frames but the deep one, which carries it): it serves each as a modern-only
    server does, so its checks would run exactly as these."""
    flags, expected = SHAPES[shape]
    if shape in LEGACY_ONLY:
        pytest.skip(LEGACY_ONLY[shape])
    shown = [case for case, verdict in expected.items() if verdict not in (OK, None)] or list(CHECKS)
    server = Server("fixture", command(*flags, "--era", "modern"), ("large", {}), slow_call=SLOW)
    runs = {}
    for checks, window in shape_windows(shape):
        if chosen := [check for check in checks if check in shown]:
            runs |= run_servers([server], chosen, window)
    judged = {case: verdict for case, verdict in expected.items() if verdict is not None and case in shown}
    found = verdicts(runs, "fixture")
    assert found == judged, differing({case: run for (_, case), run in runs.items()}, judged)
    for run in runs.values():
        assert run["server"]["era"]["protocol"] == eras.MODERN, run["server"]["era"]
        ran = [arm for arm in run["arms"].values() if "not_applicable" not in arm]  # each spoke the era found
        assert ran and all(arm["protocol"] == eras.MODERN for arm in ran), run["arms"]


@pytest.mark.parametrize(
    ("flags", "protocol", "found", "evidence"),
    [
        (("--on-discover", "error"), None, eras.LEGACY, "server/discover refused: error -32601"),
        (("--on-discover", "invalid"), None, eras.LEGACY, "server/discover refused: error -32602"),
        (("--on-discover", "silent"), None, eras.LEGACY, "no answer to server/discover within"),
        (("--on-discover", "exit"), None, eras.LEGACY, "exited 1 without answering server/discover"),
        (("--era", "modern"), None, eras.MODERN, "supportedVersions ['2026-07-28']"),
        (("--era", "both"), None, eras.MODERN, "supportedVersions ['2026-07-28']"),
        (("--era", "both"), eras.LEGACY, eras.LEGACY, "forced"),
        (("--era", "both"), eras.MODERN, eras.MODERN, "forced"),
    ],
    ids=["-32601", "-32602", "silent", "exits", "modern", "both", "both-forced-legacy", "both-forced-modern"],
)
def test_the_era_is_found_once_per_server_and_every_arm_speaks_it(flags, protocol, found, evidence):
    runs = run_servers([Server("fixture", command(*flags), ("large", {}), protocol)], ["S1", "S2", "S6a"])
    assert verdicts(runs, "fixture") == {"S1": OK, "S2": OK, "S6a": OK}, [r["reason"] for r in runs.values()]
    era = runs[("fixture", "S1")]["server"]["era"]
    assert era["protocol"] == found and evidence in era["evidence"]
    assert era["chosen_by"] == ("--protocol" if protocol else "server/discover") and ("probe" in era) != bool(protocol)
    assert era["version"] == (eras.LEGACY_VERSION if found == eras.LEGACY else eras.MODERN)
    opening, liveness = ("initialize", "ping") if found == eras.LEGACY else ("server/discover", "server/discover")
    for run in runs.values():
        for arm in run["arms"].values():
            assert arm["protocol"] == found and arm["opening"]["method"] == opening
    assert runs[("fixture", "S6a")]["arms"]["bug"]["ping_method"] == liveness


def test_an_era_the_server_lacks_gives_no_verdict_and_says_what_refused():
    servers = [
        Server("modern-only", command("--era", "modern"), None, eras.LEGACY),
        Server("legacy-only", command(), None, eras.MODERN),
    ]
    runs = run_servers(servers, ["S1", "S6a"])
    assert {key: run["verdict"] for key, run in runs.items()} == dict.fromkeys(runs, "inconclusive")
    assert "initialize refused: error -32601" in runs[("modern-only", "S1")]["reason"]
    assert "server/discover refused: error -32601" in runs[("legacy-only", "S6a")]["reason"]


def test_a_server_sharing_no_era_with_the_probe_is_not_applicable(tmp_path):
    """It answers every request with -32022 naming only a version the probe does not know."""
    script = tmp_path / "future.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    error = {'code': -32022, 'message': 'Unsupported', 'data': {'supported': ['2099-01-01']}}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m.get('id'), 'error': error}), flush=True)\n"
    )
    runs = run_servers([Server("future", f"{sys.executable} {script}")], ["S1", "S5"])
    for run in runs.values():
        assert run["verdict"] == "not_applicable" and "speaks only ['2099-01-01']" in run["reason"]
        assert run["server"]["era"]["protocol"] is None


@pytest.fixture(scope="module")
def legacy_sdk():
    """mcp 1.30.0 (FastMCP, the initialize handshake only), in the default user cache like conftest's second_sdk."""
    from stdio_probe.sdk import envs

    try:
        return resolve(Request("1.30.0", "pypi", "1.30.0"), envs.default_cache())
    except SdkError as exc:  # no index and no cached environment: nothing to run it with (a bug still fails)
        pytest.skip(f"mcp 1.30.0 unavailable: {exc}")


# the SDK's full-pipe hang (L1) shows as S2 in every era; S7-S11 on the SDKs are test_server_table's (not run here)
SDK_VERDICTS = dict.fromkeys(("S1", "S3", "S4", "S5", "S6a", "S6b"), OK) | {"S2": BUG}


def sdk_verdicts(runs: dict, label: str) -> dict[str, str]:
    return {case: verdict for case, verdict in verdicts(runs, label).items() if case in SDK_VERDICTS}


@pytest.mark.slow(55)
@pytest.mark.parametrize("which", ["pinned", "2.3.0"])
def test_the_sdks_mcpserver_in_both_eras_and_found_modern(which, pinned, second_sdk):
    """MCPServer serves both eras on stdio (the first request decides): each forced, its checks' verdicts the same
    in both, and found modern (the era probe's; its checks are the forced modern one's, each start an import of mcp)."""
    python = (pinned if which == "pinned" else second_sdk).python
    server = f"{python} {API_FIXTURE} --payload-bytes 300000"
    servers = [Server(str(protocol), server, ("payload", {}), protocol) for protocol in eras.ERAS]
    runs = run_servers(servers, list(SDK_VERDICTS), window=8.0)
    for label in eras.ERAS:
        assert sdk_verdicts(runs, label) == SDK_VERDICTS, (label, {c: r["reason"] for (n, c), r in runs.items()})
    [found] = runner.run_servers([Server("found", server, ("payload", {}))], ["S1"], Options(8.0))
    assert found["server"]["era"]["protocol"] == eras.MODERN and found["verdict"] == OK, found["reason"]
    assert runs[(eras.MODERN, "S6a")]["reason"] == "server/discover answered after invalid JSON"
    assert runs[(eras.LEGACY, "S6b")]["reason"] == "ping answered after invalid UTF-8"


def test_a_legacy_sdk_server_is_found_legacy_by_its_refusal(legacy_sdk):
    server = Server("fastmcp", f"{legacy_sdk.python} {API_FIXTURE} --payload-bytes 300000", ("payload", {}))
    runs = run_servers([server], list(SDK_VERDICTS), window=8.0)
    assert sdk_verdicts(runs, "fastmcp") == SDK_VERDICTS, {c: r["reason"] for (_, c), r in runs.items()}
    era = runs[("fastmcp", "S1")]["server"]["era"]
    assert era["protocol"] == eras.LEGACY and "error -32602" in era["evidence"]


def test_cli_records_the_era_per_server_and_shows_it_with_v(tmp_path):
    args = ["--server", command("--era", "both"), "--name", "found", "--server", command("--era", "both")]
    done = probe(*args, "--name", "forced", "--protocol", "legacy", "--only", "S1,S4", "-v", cwd=tmp_path)
    assert done.returncode == cli.EXIT_OK, done.stderr
    document = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(document, json.loads(SCHEMA_PATH.read_text()))
    found = {run["server"]["label"]: run["server"]["era"] for run in document["runs"]}
    assert found["found"]["protocol"] == eras.MODERN and found["forced"]["protocol"] == eras.LEGACY
    assert "era: 2026-07-28" in done.stdout and "era: legacy 2025-11-25" in done.stdout  # under each label
    assert_fits(done.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--server", "python3", "--protocol", "2027-01-01"], "--protocol '2027-01-01': one of legacy, 2026-07-28"),
        (["--protocol", "legacy", "--server", "python3"], "applies to the --server before it"),
        (["--server", "python3", "--protocol", "legacy", "--protocol", "legacy"], "given twice"),
    ],
)
def test_bad_protocol_is_one_line_exit_2(args, message, tmp_path):
    done = probe(*args, cwd=tmp_path)
    assert done.returncode == cli.EXIT_USAGE, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr and list(tmp_path.iterdir()) == []


# --- eras.py on its own: the client's requests, the reading of a discover answer, the server side


def test_a_modern_request_carries_the_envelope_and_keeps_its_own_meta():
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": {"progressToken": 1}}}
    stamped = eras.stamp(eras.MODERN, call)
    meta = stamped["params"]["_meta"]
    assert meta[eras.PROTOCOL_VERSION_KEY] == eras.MODERN and meta[eras.CLIENT_CAPABILITIES_KEY] == {}
    assert meta["progressToken"] == 1 and stamped["params"]["name"] == "t"
    assert call["params"]["_meta"] == {"progressToken": 1}  # the caller's message untouched
    assert eras.stamp(eras.LEGACY, call) is call
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
    assert eras.stamp(eras.MODERN, notification) is notification
    assert eras.liveness_request(eras.MODERN, 2)["method"] == "server/discover"
    assert eras.liveness_request(eras.LEGACY, 2) == {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def _error(code: int, data: object = None) -> dict:
    return {"jsonrpc": "2.0", "id": 0, "error": {"code": code, "message": "m", **({"data": data} if data else {})}}


@pytest.mark.parametrize(
    ("answer", "protocol"),
    [
        ({"id": 0, "result": {"supportedVersions": ["2025-11-25", "2026-07-28"]}}, eras.MODERN),
        ({"id": 0, "result": {"supportedVersions": ["2025-06-18"]}}, eras.LEGACY),  # go-sdk's stateful default
        ({"id": 0, "result": {}}, eras.LEGACY),
        (_error(-32601), eras.LEGACY),
        (_error(-32602), eras.LEGACY),
        (_error(-32603), eras.LEGACY),
        (_error(-32022, {"supported": ["2026-07-28"]}), eras.MODERN),
        (_error(-32004, {"supported": ["2025-11-25", "2099-01-01"]}), eras.LEGACY),
        (_error(-32022, {"supported": ["2099-01-01"]}), None),
        (None, eras.LEGACY),
    ],
)
def test_a_discover_answer_shows_the_era_as_the_sdks_read_it(answer, protocol):
    assert eras.era_from_discover(answer, 1.0)["protocol"] == protocol


def test_the_server_side_recognises_each_era_and_answers_as_a_modern_server():
    discover = eras.opening_request(eras.MODERN, 0)
    assert eras.era_of_request(discover) == eras.MODERN and eras.envelope_error(discover) is None
    assert eras.client_envelope(discover)["clientInfo"] == eras.CLIENT_INFO
    assert eras.era_of_request(eras.opening_request(eras.LEGACY, 0)) == eras.LEGACY
    bare = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {"progressToken": 1}}}
    assert eras.era_of_request(bare) is None and eras.envelope_error(bare)["code"] == eras.INVALID_PARAMS
    result = eras.discover_result({"tools": {}}, {"name": "s", "version": "1"})
    assert result["supportedVersions"] == [eras.MODERN] and result["resultType"] == "complete"
    assert result["_meta"][eras.SERVER_INFO_KEY]["name"] == "s" and {"ttlMs", "cacheScope"} <= result.keys()


def test_eras_loads_by_its_path_in_an_interpreter_without_the_probe():
    """What a scenario server started by a host can do: the module needs nothing but the stdlib."""
    path = Path(eras.__file__)
    code = (
        "import importlib.util as u, sys\n"
        f"spec = u.spec_from_file_location('eras', {str(path)!r}); m = u.module_from_spec(spec)\n"
        "spec.loader.exec_module(m); print(m.era_of_request(m.opening_request(m.MODERN, 0)))\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == eras.MODERN, done.stderr

"""S14 on a real server pair: the field's SIGTERM/SIGINT -> sys.exit(0) handler on the Python SDK.

tests/servers/signal_exit_server.py, the same code under mcp 1.30.0 and 2.3.0 (environments made once in the
default user cache, as conftest's second_sdk): after the first signal both are alive (a thread reads stdin:
S3 and S9 see it); the next signal aborts 1.30.0's interpreter ("Fatal Python error", SIGABRT) and ends 2.3.0
with exit 0.
"""

from __future__ import annotations

import pytest

from stdio_probe.core import runner
from stdio_probe.core.model import Options, Server
from stdio_probe.sdk import envs
from stdio_probe.sdk.sdk import Request, resolve
from tests.paths import TESTS

SERVER = TESTS / "servers" / "signal_exit_server.py"


@pytest.fixture(scope="module")
def legacy_sdk():
    return resolve(Request("1.30.0", "pypi", "1.30.0"), envs.default_cache())


@pytest.mark.network
@pytest.mark.parametrize(("sdk", "expected"), [("legacy_sdk", "reproduced"), ("second_sdk", "not_reproduced")])
def test_the_fields_exit_handler_aborts_on_mcp_1_only(request, sdk, expected):
    python = request.getfixturevalue(sdk).python
    server = Server("signal-exit", f"{python} {SERVER}")
    (run,) = runner.run_servers([server], ["S14"], Options(10.0, "fast"))
    assert run["verdict"] == expected, run["reason"]
    if expected == "reproduced":
        assert "SIGABRT" in run["reason"] and "Fatal Python error" in run["reason"]

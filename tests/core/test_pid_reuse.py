"""The probe signals no process it did not start, even one that took a pid the probe's run gave back.

Each run is a full `server` or `host` run in a private pid namespace, where tests/pid_victims.py puts an
unmarked victim on every pid a process of the run had once it is reaped (the kernel's ns_last_pid), at
once, while the probe goes on. A signal to a pid, or to a group by number, after its process was reaped
ends a victim; the probe's pidfds cannot reach one. Needs root (a pid namespace and ns_last_pid).

Each run takes the fixture tests' window (3 s, not the default 10 s): its time went to windows the probe waits on
an idle server or host (deaf to EOF: each check's window, then its rerun alone). The window sets how long each wait
lasts, not which processes the run starts, reaps or signals, nor their order; a victim is placed within
milliseconds of a reap, long before the window ends.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from stdio_probe.core import spawn
from tests.fixture_commands import WINDOW
from tests.paths import ROOT

SERVER = [sys.executable, str(spawn.FIXTURES / "fixture_check_server.py")]
HOST = [sys.executable, str(ROOT / "tests" / "hosts" / "fixture_host.py")]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="a private pid namespace and ns_last_pid need root and unshare(1)",
)

RUNS = {
    "server": ["server", " ".join(SERVER)],
    "server leaving a child, deaf to EOF": ["server", " ".join([*SERVER, "--no-exit-on-eof", "--leave-child"])],
    "host": ["host", " ".join([*HOST, "--", "{server}"])],
    "host signalling its child only": ["host", " ".join([*HOST, "--direct-child-only", "--", "{server}"])],
}


@pytest.mark.slow(20)
@pytest.mark.parametrize("words", RUNS.values(), ids=RUNS.keys())
def test_no_victim_on_a_reaped_pid_is_signalled(tmp_path, words):
    result, temporary = tmp_path / "victims.json", tmp_path / "tmp"
    temporary.mkdir()
    probe = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), *words, "--window", str(WINDOW)]
    probe += ["--out", str(tmp_path / "r.json")]
    harness = [sys.executable, str(ROOT / "tests" / "pid_victims.py"), str(result), "--", *probe]
    done = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", *harness],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(temporary)},
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    found = json.loads(result.read_text())
    assert found["exit"] == 0, done.stderr.decode()[-2000:]
    assert found["placed"] > 0, found  # victims were there to be hit: the test decides something
    assert found["signalled"] == {}, found
    assert list(temporary.iterdir()) == []  # the guardian removed the run's folder

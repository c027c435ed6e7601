"""No code here signals a process by a number that may have been reused: every other signal goes through a pidfd.

A pid or a process group's number names a process only until the process is reaped; a kill by number after that
reaches whatever took the number. The probe holds every process it signals by a pidfd (host_contract.Pidfd); so do
the fixtures, the SDK copies the tests patch (tests/sdk_fixes.py) and the scripts under bench/, where the probe's
package is not imported, with pidfd_send_signal itself (fix shapes once SIGTERMed their server by number up to
1.5 s after the client had reaped it). Popen.kill and
Popen.send_signal are not looked for: they signal only a child the Popen has not reaped (they poll first).
The exceptions, each a number that cannot have been taken, are listed with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.paths import ROOT

FOLDERS = ("stdio_probe", "tests", "examples", "bench")
BY_NUMBER = re.compile(r"\bos\.kill(?:pg)?\(|\bkill -[A-Z0-9]")
OWN = "os.kill(os.getpid()"  # a process's own number
ALLOWED = {  # (file, the call) -> why the number is still its process's
    ("stdio_probe/fixtures/fork_server.py", "os.killpg(pid, signal.SIGKILL)"): "its children, not yet reaped by it",
    ("tests/pid_victims.py", "os.kill(pid, signal.SIGKILL)"): "its own child, not reaped",
    ("tests/sdk_fixes.py", "os.kill(int(child), 15)"): "a child the subreaper client adopted, listed as its own",
    ("tests/core/test_fork_server.py", "os.killpg(shim.pid, signal.SIGTERM)"): "its shim, a Popen not yet waited for",
    ("tests/core/test_fork_server.py", "os.killpg(shim.pid, signal.SIGKILL)"): "its shim, a Popen not yet waited for",
}


SELF = Path(__file__).resolve()


def _calls() -> list[tuple[str, int, str]]:
    """Every kill by number in the repository's code: (file, line number, line)."""
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.resolve() == SELF:  # its list of exceptions names the calls
                continue
            relative = path.relative_to(ROOT).as_posix()
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if BY_NUMBER.search(line):
                    found.append((relative, number, line.strip()))
    return found


def test_every_signal_by_number_is_to_a_number_that_cannot_have_been_reused():
    allowed = [
        (path, number, line)
        for path, number, line in _calls()
        if OWN not in line and not any(path == where and call in line for where, call in ALLOWED)
    ]
    assert not allowed, "signal through a pidfd (host_contract.Pidfd), or say here why the number is still its own"


def test_each_exception_still_names_a_call_that_is_there():
    """An exception whose call has gone is removed, so that the list says what the code does."""
    calls = {(path, line) for path, _, line in _calls()}
    stale = [key for key in ALLOWED if not any(path == key[0] and key[1] in line for path, line in calls)]
    assert not stale, stale

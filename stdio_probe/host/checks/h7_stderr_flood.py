"""H7: stderr flood: 1 MiB on stderr before the answer; the host does not deadlock.

Trigger: the server writes FLOOD bytes to stderr, then answers. A host that pipes the server's stderr
and never reads it leaves the server blocked in write(2) (typescript-sdk #2776): shown when the host is
proven waiting forever with the server blocked on that pipe, or still running the window after the
tools/call. Host rule: inherit stderr, or drain it (spawn.StderrRing does for the probe).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.host import session
from stdio_probe.host.checks import h6_stdout_noise

ID = "H7"
TITLE = "stderr flood: 1 MiB on stderr before the answer, no deadlock"
ARMS = ("bug", "control")
SCENARIO = "stderr_flood"


def assess_bug(record: dict) -> Finding:
    """A deadlock (the host hung before the server wrote all of stderr) is shown before the contract is asked
    of the host: it never got its answer; else H6's judgement after the answer."""
    if "stuck" in record and session.first(record["events"], "stderr_written") is None:
        note = session.stuck_note(record["stuck"], "the call")
        return Finding(True, f"{note}, the server blocked writing stderr", f"deadlock: {note}")
    if (undecided := session.precondition(record)) is not None:
        return undecided
    return h6_stdout_noise.after_answer(record, "1 MiB on stderr first")


PROBE = Probe(
    ID,
    TITLE,
    ARMS,
    session.shutdown_arm(SCENARIO, session.at("message", method="tools/call")),
    session.judged(assess_bug, through=None),
)

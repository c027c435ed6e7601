"""H7: stderr flood: 1 MiB on stderr before the answer; the host does not deadlock.

Trigger: the server writes FLOOD bytes to stderr, then answers. A host that pipes the server's stderr
and never reads it leaves the server blocked in write(2) (typescript-sdk #2776): shown when the host is
proven waiting forever with the server blocked on that pipe, or still running the window after the
tools/call. Host rule: inherit stderr, or drain it (spawn.StderrRing does for the probe).
"""

from __future__ import annotations

from stdio_probe.hosts import h6_stdout_noise, session
from stdio_probe.model import Finding, Host, Options, Probe

ID = "H7"
TITLE = "stderr flood: 1 MiB on stderr before the answer, no deadlock"
ARMS = ("bug", "control")
SCENARIO = "stderr_flood"


def run_arm(arm: str, host: Host, options: Options) -> dict:
    return session.arm(
        host, options, arm, SCENARIO, session.shutdown(options, session.at("message", method="tools/call"))
    )


def assess(record: dict) -> Finding:
    if record.get("arm") == "control":
        return session.assess_control(record)
    events = record["events"]
    if "stuck" in record and session.first(events, "stderr_written") is None:
        note = session.stuck_note(record["stuck"], "the call")
        return Finding(True, f"{note}, the server blocked writing stderr", f"deadlock: {note}")
    return h6_stdout_noise.after_answer(record, "1 MiB on stderr first")


PROBE = Probe(ID, TITLE, ARMS, run_arm, assess)

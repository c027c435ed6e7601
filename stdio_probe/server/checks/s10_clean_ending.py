"""S10: a clean ending at idle stdin EOF: exit status 0, no death by signal, no crash trace on stderr.

EOF is the spec's way to end a stdio server, not an error: a server that ends it with a traceback,
a panic or SIGABRT (the Python SDK's servers where a thread holds the stdin lock at interpreter
shutdown: ha-mcp #2027, fabric-rti-mcp #211) reports a crash to every host on every normal close.
Its arm is S1's (initialize, EOF, the window: Probe.same_arms, one start of the server for both where both run);
whether it exits at all is S1's verdict, and a server alive at the window gives S10 no ending to judge.
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.server import session
from stdio_probe.server.checks import s1_idle_eof

ID = "S10"
TITLE = "idle stdin EOF: exit 0, no signal, no crash trace on stderr"
ARMS = ("bug",)
RUNTIME_CRASH_MARKS = ("panic:", "Fatal Python error", "thread '", "Segmentation fault")  # a runtime that gave up
CRASH_MARKS = ("Traceback (most recent call last)", *RUNTIME_CRASH_MARKS)


CRASH_SIGNALS = ("SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")  # none of them the probe's


def runtime_crash(record: dict) -> str | None:
    """How a server that was signalled crashed on its way out (S11, S14), or None: a death by a signal the probe
    never sends, or a runtime's crash trace on stderr. A Python traceback alone is not one: Python prints one for
    the KeyboardInterrupt or SystemExit a signal raises."""
    trace = crash_trace(record.get("stderr", ""), RUNTIME_CRASH_MARKS)
    if record.get("signal") not in CRASH_SIGNALS and not trace:
        return None
    how = f"signal {record['signal']}" if record.get("signal") else f"exit {record['exit_code']}"
    return how + (f", stderr: {trace!r}" if trace else "")


def crash_trace(stderr: str, marks: tuple[str, ...] = CRASH_MARKS) -> str | None:
    """The first line of stderr that starts a crash trace (one of marks), or None."""
    for line in stderr.splitlines():
        if any(mark in line for mark in marks) and ("panicked" in line or not line.startswith("thread '")):
            return line.strip()[:120]
    return None


def assess(record: dict) -> Finding:
    """Shown on a non-zero exit, a death by signal, or a crash trace on stderr after an EOF exit."""
    if record["exit_after_s"] is None:
        return Finding(None, f"alive {record['bound_s']:g} s after EOF: no ending to judge (S1)", "no exit (S1)")
    trace = crash_trace(record.get("stderr", ""))
    how = f"signal {record['signal']}" if record["signal"] else f"exit {record['exit_code']}"
    if record["signal"] or record["exit_code"] != 0 or trace:
        seen = f"{how}" + (f", stderr: {trace!r}" if trace else "")
        return Finding(True, f"ended at EOF with {seen}", seen[:70])
    return Finding(False, "exit 0 at EOF, no crash trace on stderr", "exit 0, no crash trace")


SAME_ARMS = {"bug": (s1_idle_eof.ID, "bug")}
PROBE = Probe(ID, TITLE, ARMS, s1_idle_eof.run_arm, session.opened(assess), same_arms=SAME_ARMS)

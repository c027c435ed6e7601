"""S14: how the server ends after SIGTERM or SIGINT while idle: no crash of its runtime on the way out.

S3 and S9 ask whether a signal ends the server within a bound; this check reads how it ended once the
signals were given: S3's and S9's arms (session.after_signal: the signal, a second one where it outlived
the bound, then the probe's own SIGTERM and SIGKILL), as S10 reads S1's: where they run, the same runs of the
server (Probe.same_arms), each of this check's arms decided on trials of its own (runner.run_trials); S11
judges its own arm's ending by the same rule (s10_clean_ending.runtime_crash).

A crash on the way out is a race of the server's shutdown paths (mcp-cron, go-sdk: "panic: close of closed
channel" on nearly every signal, a clean exit on some): each arm's trigger is tried again, on a fresh server each
time, until a trial shows a crash (session.RATE_TRIALS at most: Probe.trials), unless no code of the server's
ran on a signal (the signal's default action killed it, or it was ignored and SIGKILL ended it: the probe's
SIGTERM in between may run a handler of its own, the race again): session.no_handler_ran. The field's
handler (SIGTERM and SIGINT -> sys.exit(0): python-sdk #932, wontfix; ha-mcp #2027, ProxmoxMCP-Plus #112,
fabric-rti-mcp #211, mcp-memory-service #368) leaves a Python SDK server alive after the first signal, a
thread still reading stdin; on mcp 1.30.0 the next one aborts the interpreter ("Fatal Python error:
_enter_buffered_busy: could not acquire lock for <_io.BufferedReader name='<stdin>'>", SIGABRT), where
2.3.0 exits 0. A host that signals a server reports that crash to its user on every stop.

A crash is a death by a signal the probe never sends (SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE) or a
runtime's crash trace on stderr (Fatal Python error, a Go or Rust panic, a segmentation fault). A Python
traceback alone is not one here: Python prints one for the KeyboardInterrupt or SystemExit a signal raises.
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Options, Probe, Server
from stdio_probe.server import session
from stdio_probe.server.checks import s3_sigterm, s9_sigint_idle
from stdio_probe.server.checks.s10_clean_ending import runtime_crash

ID = "S14"
TITLE = "SIGTERM or SIGINT while idle: it ends without a crash of its runtime"
ARMS = ("sigterm", "sigint")


def run_arm(arm: str, server: Server, options: Options) -> dict:
    """S3's arm (sigterm) or S9's (sigint)."""
    return {"sigterm": s3_sigterm.run_arm, "sigint": s9_sigint_idle.run_arm}[arm]("bug", server, options)


def assess(record: dict) -> Finding:
    """Shown when the server died by a signal the probe never sends, or left a runtime's crash trace on stderr."""
    sent = record["trigger"] + (f", {record['trigger']} again" if "again_exit_after_s" in record else "")
    if record["ended_by"] not in ("self", record["trigger"]):
        sent += f", the probe's {record['ended_by']}"
    if crashed := runtime_crash(record):
        return Finding(True, f"ended with {crashed} after {sent}", crashed[:70])
    how = f"signal {record['signal']}" if record["signal"] else f"exit {record['exit_code']}"
    return Finding(False, f"ended with {how} after {sent}, no crash", f"{how}, no crash")


SAME_ARMS = {"sigterm": (s3_sigterm.ID, "bug"), "sigint": (s9_sigint_idle.ID, "bug")}


def settled(record: dict) -> str | None:
    """A trial in which no code of the server's ran on its signal settles the race (session.no_handler_ran)."""
    return session.no_handler_ran(record, record["trigger"])


PROBE = Probe(
    ID, TITLE, ARMS, run_arm, session.opened(assess), trials=session.RATE_TRIALS, settles=settled, same_arms=SAME_ARMS
)

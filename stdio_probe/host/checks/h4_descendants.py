"""H4: descendants: nothing of the server's tree is alive SURVIVOR_GRACE (1 s) after the host has exited.

Trigger (bug arm, L9's shape): a server that starts a background child in its process group and exits
by itself at stdin EOF. Second pair (wrapper arm, typescript-sdk #2023's shape): a wrapper like npx or
uvx whose child is the real server, and that child ignores stdin EOF, so only a signal to the whole
tree ends it; its verdict is in the run's pairs, named in the reason. A host that never exits is killed
by the probe (SIGKILL to the host alone, as H10) and judged on what it left: where it had signalled part
of the server's tree (the wrapper) and a process it never signalled (the wrapper's child, holding the
pipes the host waits on) is alive SURVIVOR_GRACE later, the defect is shown; a host that never began to
end the server is no evidence. A host that started more than one server is judged on each
(session.per_server). Host rule: host_contract.end_server_group (kill what is left of the server's
process group).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Host, Options, Probe, parent_of
from stdio_probe.host import session

ID = "H4"
TITLE = "descendants: nothing of the server's tree outlives the host"
ARMS = ("bug", "control", "wrapper")
PAIRS = {"wrapper": ("wrapper", "control")}
SCENARIOS = {"bug": "bg_child", "wrapper": "wrapper"}


def run_arm(arm: str, host: Host, options: Options) -> dict:
    """The shutdown watched from the answer; a host stuck there is killed, and what it left looked at."""

    def body(r: session.HostRun) -> dict:
        waited = r.wait_host(options, session.at("answered"))
        if "stuck" in waited:
            waited["killed_t"] = r.kill_host()
        return {"bound_s": options.window, **session.shutdown_facts(r, waited)}

    return session.arm(host, options, arm, SCENARIOS.get(arm, ""), body)


def assess_bug(record: dict) -> Finding:
    """Shown when anything of the server's tree is alive SURVIVOR_GRACE after the host exited (stuck_host: after
    the probe killed a host that never exited)."""
    events = record["events"]
    if "stuck" in record:
        return stuck_host(record)
    if survivors := record["survivors"]:
        listed = _listed(survivors)
        return Finding(
            True,
            f"{len(survivors)} alive {session.SURVIVOR_GRACE:g} s after the host exited: {listed}",
            f"{len(survivors)} alive after the host, {parent_of(survivors[0])}",
        )
    sigs = ", ".join(sorted({s["name"] for s in session.signals(events)})) or "no signal"
    return Finding(False, f"nothing of the server's tree alive after the host exited ({sigs})", "nothing left")


def stuck_host(record: dict) -> Finding:
    """A host that never exited, killed by the probe: shown where it had signalled part of the server's tree and
    a process it never signalled outlived it by SURVIVOR_GRACE (a host that signals only a wrapper, whose child
    holds the pipes it waits on); else no evidence (it never began to end the server, or nothing was left)."""
    stuck = session.stuck_note(record["stuck"], "the answer")
    killed = record.get("killed_t")
    signalled = [sig for sig in session.signals(record["events"]) if killed is not None and sig["t"] < killed]
    left = [s for s in record["survivors"] if s["pid"] not in {sig["pid"] for sig in signalled}]
    if not signalled or not left:
        return Finding(None, f"the host never exited ({stuck})", "host never exited")
    told = ", ".join(f"{sig['name']} to {sig['pid']}" for sig in signalled)
    return Finding(
        True,
        f"the host signalled only part of the server's tree ({told}) and never exited ({stuck}); "
        f"{len(left)} never signalled alive {session.SURVIVOR_GRACE:g} s after the probe killed it: {_listed(left)}",
        f"{len(left)} unsignalled alive after the host, {parent_of(left[0])}",
    )


def _listed(survivors: list[dict]) -> str:
    return ", ".join(f"{s['pid']} {s['cmdline'][-60:]!r} ({parent_of(s)})" for s in survivors)


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.judged(session.per_server(assess_bug)), pairs=PAIRS)

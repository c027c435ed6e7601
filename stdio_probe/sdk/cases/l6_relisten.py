"""L6: after a stdio reconnect, re-listening is not enough: the change made while down is not replayed.

With 2026-07-28 subscriptions/listen (mcp/client/subscriptions.py: listen()
enters once notifications/subscriptions/acknowledged arrives and yields only
events that arrive afterwards; "There is no replay and no automatic re-listen"),
a relaunched stdio server is a new process with no memory of the old stream. A
host that re-sends listen and takes the ack as "in sync" keeps the palette it
had before the outage; a tool removed while the server was down stays in it.

Arms: bug (naive host), control (no outage: the change arrives as a
notification), mitigated (supervisor: backoff, listen, ack, re-fetch, drop
frames of the old stream), crash_loop (spawns in a fixed interval,
CRASH_LOOP_INTERVAL, of a server that dies on start-up: naive reconnect loop
against exponential backoff; the interval is the trigger, the same in both
methods, and decides no verdict).
After the relaunch the host follows its new subscription until no event came
for 1 s (driver_listen.QUIET), re-listing on each: that wait for a replayed or
resync event is part of the trigger, the same in both methods (the window
method does not wait longer), so an SDK or host whose event comes, or that
re-lists, later than that reads reproduced either way.
An SDK without Client.listen makes every arm not_applicable.
"""

from __future__ import annotations

from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.sdk.driver import checkpoint, run_driver

ID = "L6"
TITLE = "re-listen after a stdio reconnect does not replay changes made while down"
DRIVER = "driver_listen.py"
EXTRA_ARMS = ("crash_loop",)  # mitigated is one of ARMS
CRASH_LOOP_INTERVAL = 2.0  # seconds each loop runs against the crashing server
SCENARIOS = {
    "bug": ["outage", "--host", "naive"],
    "control": ["steady"],
    "mitigated": ["outage", "--host", "supervisor"],
    "crash_loop": ["crash-loop", "--interval", str(CRASH_LOOP_INTERVAL)],
}
STEP_TIMEOUT = 15.0  # no-progress bound per checkpoint: above the driver's own longest wait (relaunch, 10 s)


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    return {"scenario": SCENARIOS[arm][0], **run_driver(sdk, SCENARIOS[arm], options, DRIVER, STEP_TIMEOUT)}


def assess(record: dict) -> Finding:
    """Outage and steady arms: shown when the host's palette differs from what the server lists."""
    if record["scenario"] == "crash-loop":
        return _crash_loop(record)
    settled = checkpoint(record, "settled")
    if settled is None:
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    facts = settled["facts"]
    if facts["outage"]:
        down = checkpoint(record, "down")
        if down["facts"]["server_alive"] or down["children"]:
            return Finding(None, "the server was not down while its catalogue changed", "server was not down")
    palette, served = set(facts["palette"]), set(facts["server_tools"])
    ghosts, missing = sorted(palette - served), sorted(served - palette)
    note = f"palette {facts['palette']}, server lists {facts['server_tools']}"
    if ghosts:
        note += f": shows {ghosts}, which no longer exist"
    events = facts["events"]
    note += f"; change events on {facts['subscription_ids'][-1]}: {events or 'none replayed'}"
    note += f", {facts['host_lists']} tools/list by the host"
    old = [f for f in facts["frames"] if f["subscription_id"] != facts["subscription_ids"][-1]]
    if old:
        dropped = sum(f["dropped"] for f in old)
        note += f", {len(old)} late frame(s) of the old stream reached message_handler ({dropped} dropped)"
    if ghosts or missing:
        short = f"after reconnect shows gone {ghosts}" if ghosts else f"after reconnect lacks {missing}"
    else:
        short = "palette matches the server"
    return Finding(bool(ghosts or missing), note, short)


def _crash_loop(record: dict) -> Finding:
    naive, supervised = checkpoint(record, "crash_loop_naive"), checkpoint(record, "crash_loop_supervisor")
    if naive is None or supervised is None:
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    n, s = naive["facts"], supervised["facts"]
    note = (
        f"server dying on start-up, {n['interval_s']:g} s each: naive loop {n['spawns']} spawns, "
        f"supervisor {s['spawns']} (delays {s['delays']})"
    )
    return Finding(n["spawns"] > s["spawns"], note, f"naive loop {n['spawns']} spawns, supervisor {s['spawns']}")


PROBE = Probe(ID, TITLE, (*CASE_ARMS, *EXTRA_ARMS), run_arm, assess)

"""H9: crash and reconnect (the second seed): a host that relaunches a crashed server re-lists, and backs off.

Trigger: the first launch exits 1 at the first request after its tools/list, unanswered (a crash while the
host uses it); relaunches 2 to CRASH_LOOP+1 (4) die at start (a crash loop), later ones behave. A host that
never starts a server after a crash is not_applicable ("does not reconnect"), whatever else it started: a host
that starts a server per operation ends the first itself (its stdin's EOF: no crash) and starts the next for
its call, which dies at start; only a launch after that crash is a relaunch (session.launches, server_shape).
Shown when the crash loop's relaunches show no back-off, or a relaunch
that stayed up got no tools/list within the window (the tool table was not re-fetched; not asked of a host
that starts a server per operation, or several at once: its tool table came from a server it ended itself),
or, where the first launch got subscriptions/listen, the relaunch did not get it again. The era the host
chose decides what re-listening means (2026-07-28: subscriptions/listen with its acknowledgement).

Back-off is a pause: before each relaunch of the crash loop, the time from the crashed server's exit to the
next start in which the host's tree made no progress (its pauses, read on the no-progress clock, to its
resolution of PAUSE_STRETCH). No back-off: the pauses do not grow (by GROWTH and GROWTH_MIN_S) and one is
shorter than MIN_GAP. Wall time between starts is not read: a loaded machine stretched one start-up by half a
second (gaps 0.23, 0.09, 0.60 s: "grown") for a host that relaunched at once, while start-up is progress. A
stored record made before pauses were kept is judged on its gaps between starts, as it was then. Limit: the
clock reads the host's whole tree, so a host whose other children keep working through its back-off reads no
pause there (no back-off shown where there is one).
"""

from __future__ import annotations

from stdio_probe.core import progress
from stdio_probe.core.model import Finding, Host, Options, Probe
from stdio_probe.host import session

ID = "H9"
TITLE = "crash and reconnect: relaunch re-lists and backs off"
ARMS = ("bug", "control")
SCENARIO = "crash_after_list"
CRASH_LOOP = 3  # the scenario server's: relaunches that die at start
GROWTH = 1.5  # a host backs off when the crash loop's last pause is this many times its first ...
GROWTH_MIN_S = 0.25  # ... and longer by this much: pauses near the clock's resolution vary by more than 1.5x
MIN_GAP = 1.0  # ... or when no pause is shorter than this (seconds)
PAUSE_STRETCH = 2 * progress.READ_EVERY  # the shortest stretch without progress the clock keeps


def run_arm(arm: str, host: Host, options: Options) -> dict:
    def body(r: session.HostRun) -> dict:
        def good_relaunch_listed(events: list[dict]) -> bool:
            return "tools/list" in session.methods(events, launch=CRASH_LOOP + 2) or r.host_exited()

        trigger = session.at("exit", launch=1)
        r.wait_for_trigger(lambda events: trigger(events) is not None)
        r.wait_for_trigger(good_relaunch_listed)
        return {"bound_s": options.window, "pause_stretches": r.clock.idle_stretches(PAUSE_STRETCH)}

    return session.arm(host, options, arm, SCENARIO, body)


def relaunches(events: list[dict]) -> list[dict]:
    """The launches started after the one before them crashed (session.launches): the host's relaunches."""
    servers = session.launches(events)
    return [
        later
        for earlier, later in zip(servers, servers[1:], strict=False)
        if earlier["ended"] == "crash" and earlier["ended_t"] <= later["t"]
    ]


def no_relaunch(record: dict) -> str | None:
    """A host that listed its tools and, after a server crashed, started none: it does not reconnect."""
    if "events" not in record or "tools/list" not in session.methods(record["events"]):
        return None
    events = record["events"]
    servers = session.launches(events)
    crashed = [server for server in servers if server["ended"] == "crash"]
    if not crashed or relaunches(events):
        return None
    if len(servers) == 1:
        return "does not reconnect: no relaunch after the server exited"
    last = crashed[-1]
    how = "at start" if not session.methods(events, last["launch"]) else "while in use"
    shape = session.server_shape(events)
    return f"does not reconnect: no relaunch after {session.named(last)} crashed {how} ({shape})"


def assess_bug(record: dict) -> Finding:
    """Shown when the crash loop's relaunches do not back off, or the relaunch that stays up is not re-listed."""
    events = record["events"]
    if not any(server["ended"] == "crash" for server in session.launches(events)):
        return Finding(None, "no server crashed: the host sent no request after tools/list", "no crash")
    starts = [e["t"] for e in events if e["event"] == "start"]
    shape = session.server_shape(events)
    seen = f"{len(starts)} launches" + ("" if shape == "one server" else f" ({shape})")
    gaps, kept = pauses(record)
    if len(gaps) >= 2:
        what, named = ("without progress before each", "pauses") if kept else ("apart", "gaps")
        seen += f", crash loop {' '.join(f'{gap:.2f}' for gap in gaps)} s {what}"
        grew = gaps[-1] >= GROWTH * gaps[0] and gaps[-1] - gaps[0] >= GROWTH_MIN_S
        if not grew and min(gaps) < MIN_GAP:
            relaunched = f"after a pause of {min(gaps):.2f} s" if kept else f"{min(gaps):.2f} s apart"
            return Finding(
                True,
                f"{seen}: no back-off (the {named} do not grow, one is under {MIN_GAP:g} s)",
                f"no back-off: relaunched {relaunched}",
            )
    good = CRASH_LOOP + 2
    if len(starts) >= good:
        if shape != "one server":
            return Finding(False, f"{seen}: relaunched after the crash loop (no re-list asked)", f"relaunched ({seen})")
        if "tools/list" not in session.methods(events, launch=good):
            return Finding(True, f"{seen}: the relaunch that stayed up got no tools/list", "no re-list after relaunch")
        if "subscriptions/listen" in session.methods(events, 1) and "subscriptions/listen" not in session.methods(
            events, good
        ):
            return Finding(True, f"{seen}: subscriptions/listen not re-sent after relaunch", "no re-listen")
        return Finding(False, f"{seen}: re-listed after relaunch", f"relaunched, re-listed ({seen})")
    return Finding(False, f"{seen}: gave up after the crash loop", f"gave up after {len(starts)} launches")


def pauses(record: dict) -> tuple[list[float], bool]:
    """Before each relaunch of the crash loop (after launches 2 to CRASH_LOOP+1, each dead at start), the host's
    time without progress from the crashed server's exit to the next start, and True; a stored record without
    pause_stretches: the gaps between those starts, and False."""
    servers = session.launches(record["events"])
    loop = list(zip(servers[1:], servers[2 : CRASH_LOOP + 2], strict=False))
    if "pause_stretches" not in record:
        return [later["t"] - earlier["t"] for earlier, later in loop], False
    stretches = record["pause_stretches"]
    found = [
        sum(progress.overlap(stretch, earlier["ended_t"], later["t"]) for stretch in stretches)
        for earlier, later in loop
        if earlier["ended_t"] is not None
    ]
    return found, True


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.judged(assess_bug, "tools/list"), needs={"bug": no_relaunch})

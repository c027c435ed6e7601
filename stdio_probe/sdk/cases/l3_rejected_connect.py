"""L3: a connect rejected by ClientSessionGroup leaks its transport and child.

connect_to_server in mcp/client/session_group.py starts the transport and
initialises the session, then _aggregate_components raises on a duplicate
tool name before the session is recorded. The session stack stays entered on
the group's exit stack: the child lives until the whole group closes, and the
caller holds no handle to disconnect it.

The mitigated arm makes the same rejected connect through
host_contract.connect_or_close, which closes the transport it opened.
"""

from __future__ import annotations

from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.sdk.driver import checkpoint, run_driver

ID = "L3"
TITLE = "rejected connect leaks its transport and child process"
SECOND_TOOLS = {"bug": "dup", "control": "other", "mitigated": "dup"}


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """Connect A (tool dup), then B: dup (rejected) in the bug and mitigated arms, distinct in the control."""
    contract = ["--contract"] if arm == "mitigated" else []
    return run_driver(sdk, [*contract, "rejected-connect", "--second-tools", SECOND_TOOLS[arm]], options)


def assess(record: dict) -> Finding:
    """Shown when more children are alive than the group records sessions."""
    after = checkpoint(record, "after_second_connect")
    closed = checkpoint(record, "after_group_close")
    if after is None or closed is None:
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    sessions, children = after["facts"]["sessions"], len(after["children"])
    rejected = "rejected" if after["facts"]["error"] else "accepted"
    note = f"second connect {rejected}: {sessions} sessions, {children} children; {len(closed['children'])} after close"
    note += "".join(f"; {n}" for n in after["facts"].get("notes", []))
    note += f"; the group's close raised {closed['facts']['close_error']}" if closed["facts"].get("close_error") else ""
    short = f"{children} children alive, group has {sessions} session{'s' * (sessions != 1)}"
    return Finding(children > sessions, note, short)


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

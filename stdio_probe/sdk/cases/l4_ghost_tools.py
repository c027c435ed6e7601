"""L4: ghost tools survive disconnect after a session is re-registered.

_aggregate_components in mcp/client/session_group.py merges each
registration's tools into the group's tables but overwrites the session's
reverse index. disconnect_from_server removes only the names in the current
index, so tools from the earlier registration stay in group.tools.

The mitigated arm re-registers as the bug arm does and disconnects through
host_contract.disconnect_verified, which removes what the group still routes
to the gone session.
"""

from __future__ import annotations

from stdio_probe.core.model import CASE_ARMS, Finding, Options, Probe, Sdk
from stdio_probe.sdk.driver import checkpoint, run_driver

ID = "L4"
TITLE = "ghost tools survive disconnect after re-registration"
REGISTRATIONS = {"bug": 2, "control": 1, "mitigated": 2}


def run_arm(arm: str, sdk: Sdk, options: Options) -> dict:
    """Register a caller-owned session (server lists old, then new) once or twice, then disconnect."""
    contract = ["--contract"] if arm == "mitigated" else []
    return run_driver(sdk, [*contract, "reregister", "--registrations", str(REGISTRATIONS[arm])], options)


def assess(record: dict) -> Finding:
    """Shown when tools remain in group.tools after the only session disconnected."""
    registered = checkpoint(record, "after_registration")
    after = checkpoint(record, "after_disconnect")
    if registered is None or after is None:
        return Finding(None, "driver did not reach its checkpoints", "driver stopped early")
    left = after["facts"]["tools"]
    note = f"tools {registered['facts']['tools']} registered, {left or 'none'} left after disconnect"
    if after["facts"].get("ghosts_removed"):
        note += f" (disconnect_verified removed ghosts {after['facts']['ghosts_removed']})"
    short = f"ghost tools {left} after disconnect" if left else "no tools left after disconnect"
    return Finding(bool(left), note, short)


PROBE = Probe(ID, TITLE, CASE_ARMS, run_arm, assess)

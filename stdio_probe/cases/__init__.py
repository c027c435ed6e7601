"""The cases, one module each; this registry is the only list of them."""

from stdio_probe.cases import (
    l1_full_pipe,
    l2_surrogate,
    l3_rejected_connect,
    l4_ghost_tools,
    l5_strict_decoding,
    l6_relisten,
    l7_request_surrogate,
    l8_dead_server,
    l9_descendants,
    l10_native_cancel,
    l11_lifespan_cleanup,
    l12_sigint,
)

CASES = {
    case.ID: case
    for case in (
        l1_full_pipe,
        l2_surrogate,
        l3_rejected_connect,
        l4_ghost_tools,
        l5_strict_decoding,
        l6_relisten,
        l7_request_surrogate,
        l8_dead_server,
        l9_descendants,
        l10_native_cancel,
        l11_lifespan_cleanup,
        l12_sigint,
    )
}
# bug and control decide the verdict; mitigated is the bug's trigger with the host contract applied
ARMS = ("bug", "control", "mitigated")


def arms_of(case_id: str) -> tuple[str, ...]:
    """The arms run for a case: ARMS, then the case's own EXTRA_ARMS (recorded, not part of the verdict rule)."""
    return tuple(dict.fromkeys((*ARMS, *getattr(CASES[case_id], "EXTRA_ARMS", ()))))

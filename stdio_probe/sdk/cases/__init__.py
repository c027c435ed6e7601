"""The cases, one module each (its PROBE, model.Probe); this registry is the only list of them."""

from stdio_probe.core.model import CASE_ARMS, Probe, registry

CASES: dict[str, Probe] = registry(
    __name__,
    (
        "l1_full_pipe", "l2_surrogate", "l3_rejected_connect", "l4_ghost_tools", "l5_strict_decoding", "l6_relisten",
        "l7_request_surrogate", "l8_dead_server", "l9_descendants", "l10_native_cancel", "l11_lifespan_cleanup",
        "l12_sigint", "l13_fatal_tool"
    ),
)
ARMS = CASE_ARMS  # the arms of the verdict rule and the host contract; a case may run more (Probe.arms)

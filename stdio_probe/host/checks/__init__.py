"""The host checks (--host): one module each; this registry is the only list of them.

Each module's PROBE (model.Probe) runs against a Host:
the probe plays the server (fixtures/scenario_server.py). Every check's "bug" arm gives the host its
defect's scenario; the "control" arm, the well-behaved scenario, is run once per host and shared by
every check (runner.Hosts): a host that cannot start, connect or call there makes each check
inconclusive (decide.decide's bug/control rule).
"""

from stdio_probe.core.model import Probe, registry

HOST_CHECKS: dict[str, Probe] = registry(
    __name__,
    (
        "h1_graceful_close", "h2_eof_ignored", "h3_sigterm_ignored", "h4_descendants", "h5_dead_server",
        "h6_stdout_noise", "h7_stderr_flood", "h8_large_answer", "h9_reconnect", "h10_host_killed",
        "h11_mute_server",
    ),
)

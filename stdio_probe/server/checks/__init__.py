"""The server checks (--server): one module each; this registry is the only list of them.

Each module's PROBE (model.Probe, the contract of a case) runs against a Server, not an SDK, and
names its own arms: "bug" and "control" where a control is needed for a finding;
otherwise every arm is a trigger of its own (decide.decide_check). S6a and S6b share their
mechanism (s6_bad_input) and are judged apart: their fixes differ.
"""

from stdio_probe.core.model import Probe, registry

CHECKS: dict[str, Probe] = registry(
    __name__,
    (
        "s1_idle_eof", "s2_eof_unread", "s3_sigterm", "s4_stdout_only_jsonrpc", "s5_descendants", "s6a_invalid_json",
        "s6b_invalid_utf8", "s7_answers_before_exit", "s8_reader_gone", "s9_sigint_idle", "s10_clean_ending",
        "s11_sigterm_stuck", "s12_invalid_requests", "s13_eof_in_flight", "s14_signal_ending"
    ),
)

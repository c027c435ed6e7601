"""The server checks (--server): one module each; this registry is the only list of them.

A check has the shape of a case (ID, TITLE, run_arm, assess) but runs against a Server, not an
SDK, and names its own ARMS: "bug" and "control" where a control is needed for a finding;
otherwise every arm is a trigger of its own (decide.decide_check).
"""

from stdio_probe.checks import (
    s1_idle_eof,
    s2_eof_unread,
    s3_sigterm,
    s4_stdout_only_jsonrpc,
    s5_descendants,
    s6_bad_input,
)

CHECKS = {
    check.ID: check
    for check in (s1_idle_eof, s2_eof_unread, s3_sigterm, s4_stdout_only_jsonrpc, s5_descendants, s6_bad_input)
}

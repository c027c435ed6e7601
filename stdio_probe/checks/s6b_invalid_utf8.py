"""S6b: a line of invalid UTF-8 (else a JSON-RPC notification) on stdin, then ping: the server still answers."""

from __future__ import annotations

from stdio_probe.checks.s6_bad_input import assess_bad_line, run_bad_line
from stdio_probe.model import Finding, Options, Probe, Server

ID = "S6b"
TITLE = "a line of invalid UTF-8, then ping answered"
ARMS = ("bug",)
LINE = b'{"jsonrpc": "2.0", "method": "\xff\xfe"}\n'


def run_arm(arm: str, server: Server, options: Options) -> dict:
    return run_bad_line(LINE, server, options)


def assess(record: dict) -> Finding:
    return assess_bad_line(record, "invalid UTF-8")


PROBE = Probe(ID, TITLE, ARMS, run_arm, assess)

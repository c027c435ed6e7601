"""S6a: a line of invalid JSON (valid UTF-8) on stdin, then ping: the server still answers."""

from __future__ import annotations

from stdio_probe.checks.s6_bad_input import assess_bad_line, run_bad_line
from stdio_probe.model import Finding, Options, Probe, Server

ID = "S6a"
TITLE = "a line of invalid JSON, then ping answered"
ARMS = ("bug",)
LINE = b'{"jsonrpc": "2.0", "id": 7, "method": \n'


def run_arm(arm: str, server: Server, options: Options) -> dict:
    return run_bad_line(LINE, server, options)


def assess(record: dict) -> Finding:
    return assess_bad_line(record, "invalid JSON")


PROBE = Probe(ID, TITLE, ARMS, run_arm, assess)

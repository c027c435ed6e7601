"""S6a: a line of invalid JSON (valid UTF-8) on stdin, then ping: the server still answers."""

from stdio_probe.server.checks.s6_bad_input import bad_line_probe

LINE = b'{"jsonrpc": "2.0", "id": 7, "method": \n'
PROBE = bad_line_probe("S6a", "a line of invalid JSON, then ping answered", LINE, "invalid JSON")

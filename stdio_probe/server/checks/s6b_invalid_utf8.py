"""S6b: a line of invalid UTF-8 (else a JSON-RPC notification) on stdin, then ping: the server still answers."""

from stdio_probe.server.checks.s6_bad_input import bad_line_probe

LINE = b'{"jsonrpc": "2.0", "method": "\xff\xfe"}\n'
PROBE = bad_line_probe("S6b", "a line of invalid UTF-8, then ping answered", LINE, "invalid UTF-8")

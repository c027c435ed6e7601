"""Reproduce the MCP Python SDK's stdio lifecycle defects L1-L6 and write results.json."""

import sys

from stdio_probe.cli import main

if __name__ == "__main__":
    sys.exit(main())

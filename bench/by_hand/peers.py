"""The servers the client-side hand checks start, as StdioServerParameters."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def api_server(env: dict[str, str] | None = None):
    """api_server.py in this interpreter, with this process's PYTHONPATH (the SDK copy under test)."""
    from mcp.client.stdio import StdioServerParameters

    path = os.path.join(HERE, "api_server.py")
    full = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), **(env or {})}
    return StdioServerParameters(command=sys.executable, args=[path], env=full)

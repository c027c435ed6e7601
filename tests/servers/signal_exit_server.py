"""A minimal server with the field's signal handler: SIGTERM and SIGINT call sys.exit(0) (python-sdk #932,
wontfix; ha-mcp #2027, ProxmoxMCP-Plus #112, fabric-rti-mcp #211, mcp-memory-service #368). On the Python
SDK the first signal leaves it alive (a thread reads stdin); on mcp 1.x the second aborts the interpreter."""

import signal
import sys

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1.x

server = Server("signal-exit")


@server.tool()
def echo(text: str = "") -> str:
    return text


def leave(signum: int, frame: object) -> None:
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)
    server.run()

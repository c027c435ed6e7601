"""Recipe: FastMCP's Client over a StdioTransport as a host under the host contract.

Host: fastmcp, pinned 4.1.6, on mcp 2.3.0 (examples/hosts/README.md; tests/third_party_hosts.py installs
both into an environment of their own).
Run: PYTHON fastmcp_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: the client as its docs show it for a stdio server: `async with Client(StdioTransport(command,
args))` starts the server by its argv words and connects (FastMCP's client on mcp's handshake),
list_tools(), call_tool("probe", {}), and leaving the context. Every option is the library's default,
among them keep_alive=True: the transport keeps the server running when the client's context exits,
until the transport is dropped or the interpreter exits. Exit 0 on success; one line on stderr and
exit 1 on failure.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport


async def run(server: list[str]) -> None:
    async with Client(StdioTransport(command=server[0], args=server[1:])) as client:
        tools = await client.list_tools()
        if "probe" not in [tool.name for tool in tools]:
            raise RuntimeError("the server lists no tool named probe")
        await client.call_tool("probe", {})  # a tool error raises (ToolError, the default raise_on_error)


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: fastmcp_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"fastmcp host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

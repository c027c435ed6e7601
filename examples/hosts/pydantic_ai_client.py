"""Recipe: Pydantic AI's MCPToolset over a stdio transport as a host under the host contract (no model calls).

Host: pydantic-ai-slim[mcp], pinned 2.68.0, on the FastMCP client (fastmcp-slim 4.2.3) and mcp 2.3.0
(examples/hosts/README.md; tests/third_party_hosts.py installs them into an environment of their own).
Run: PYTHON pydantic_ai_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: what an Agent does with the toolset around its model turns, without an Agent or a model:
MCPToolset(StdioTransport(command, args)) as its docs show for a stdio server, `async with` it
(the server started by its argv words, connected through FastMCP's client and mcp's handshake),
list_tools(), direct_call_tool("probe", {}), and leaving the context. Every option is the
framework's default, among them FastMCP's keep_alive=True: the server is left running when the
context exits and ends only when the transport is dropped or the interpreter exits. Exit 0 on
success; one line on stderr and exit 1 on failure.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp.client.transports import StdioTransport
from pydantic_ai.mcp import MCPToolset


async def run(server: list[str]) -> None:
    toolset = MCPToolset(StdioTransport(command=server[0], args=server[1:]))
    async with toolset:
        tools = await toolset.list_tools()
        if "probe" not in [tool.name for tool in tools]:
            raise RuntimeError("the server lists no tool named probe")
        await toolset.direct_call_tool("probe", {})  # a tool error raises (ModelRetry, the default behaviour)


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: pydantic_ai_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"pydantic-ai host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

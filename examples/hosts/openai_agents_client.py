"""Recipe: the OpenAI Agents SDK's MCPServerStdio as a host under the host contract (no model calls).

Host: openai-agents, pinned 0.24.0, on mcp 2.3.0 (examples/hosts/README.md; tests/third_party_hosts.py
installs both into an environment of their own).
Run: PYTHON openai_agents_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: what an Agent does with an MCP server before and after its model turns, without an Agent
or a model: `async with MCPServerStdio(...)` starts the server by its argv words and connects (the
framework's own handshake through the mcp client it wraps), list_tools(), call_tool("probe", {}),
and leaving the context runs its cleanup (the connection closed the framework's way). Every option
is the framework's default (among them its 5 s client session read timeout). Exit 0 on success;
one line on stderr and exit 1 on failure.
"""

from __future__ import annotations

import asyncio
import sys

from agents.mcp import MCPServerStdio


async def run(server: list[str]) -> None:
    async with MCPServerStdio(params={"command": server[0], "args": server[1:]}) as mcp_server:
        tools = await mcp_server.list_tools()
        if "probe" not in [tool.name for tool in tools]:
            raise RuntimeError("the server lists no tool named probe")
        result = await mcp_server.call_tool("probe", {})
        if result.is_error:
            raise RuntimeError("the call of probe returned an error")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: openai_agents_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"openai-agents host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

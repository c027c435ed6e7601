"""Recipe: LangChain's MCP adapters (MultiServerMCPClient) as a host under the host contract (no model calls).

Host: langchain-mcp-adapters, pinned 0.3.2, on mcp 1.30.0 (its dependency caps mcp below 2;
examples/hosts/README.md; tests/third_party_hosts.py installs them into an environment of their own).
Run: PYTHON langchain_mcp_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: what an agent built on LangChain does with one stdio server, without an agent or a model,
in the adapters' documented stateful form (one session, one server process): `async with
client.session(name)` starts the server by its argv words and initializes (mcp's legacy handshake),
load_mcp_tools(session) lists the tools as LangChain tools, the `probe` tool is invoked once with
no arguments, and leaving the context closes the session the mcp client's way. (get_tools() and a
tool invoked outside a session would start a server per operation: not this contract.) Exit 0 on
success; one line on stderr and exit 1 on failure.
"""

from __future__ import annotations

import asyncio
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools


async def run(server: list[str]) -> None:
    client = MultiServerMCPClient({"server": {"transport": "stdio", "command": server[0], "args": server[1:]}})
    async with client.session("server") as session:
        tools = {tool.name: tool for tool in await load_mcp_tools(session)}
        if "probe" not in tools:
            raise RuntimeError("the server lists no tool named probe")
        await tools["probe"].ainvoke({})


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: langchain_mcp_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"langchain-mcp-adapters host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

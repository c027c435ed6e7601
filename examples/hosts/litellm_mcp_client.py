"""Recipe: LiteLLM's MCP client (litellm.mcp_client.MCPClient, what its proxy's MCP gateway connects to each
upstream server with) over its stdio transport, as a host under the host contract (no model calls).

Host: litellm[mcp], pinned 1.110.2, on mcp 2.3.0 (tests/ecosystem.toml; tests/ecosystem.py installs both into
an environment of their own). litellm[proxy], the gateway itself, does not install from the registry
(it needs litellm-proxy 1.110.2, which is not published): the client is the part of it that launches servers.
Run: PYTHON litellm_mcp_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: the gateway's use of a stdio server's config (command and args, transport stdio): MCPClient with
that stdio_config, list_tools() and call_tool() of `probe`, each with raise_on_error=True so that a failure
is the host's error, not an empty list; each operation opens its own session, as the client does by default
(a server per operation: started, initialized, used and closed by the library). Every other option is the
library's default (its environment allow-list for the server, its timeouts). Exit 0 on success; one line on
stderr and exit 1 on failure.
"""

from __future__ import annotations

import asyncio
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before its import: no fetch of the price list

from litellm.mcp_client.client import MCPClient
from mcp.types import CallToolRequestParams


async def run(server: list[str]) -> None:
    client = MCPClient(transport_type="stdio", stdio_config={"command": server[0], "args": server[1:]})
    tools = await client.list_tools(raise_on_error=True)
    if "probe" not in [tool.name for tool in tools]:
        raise RuntimeError("the server lists no tool named probe")
    result = await client.call_tool(CallToolRequestParams(name="probe", arguments={}), raise_on_error=True)
    if getattr(result, "is_error", False):
        raise RuntimeError("the call of probe returned an error")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: litellm_mcp_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"litellm host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Recipe: the MCP Python SDK's client (stdio_client + ClientSession) as a host under the host contract.

Host: the `mcp` package, pinned 2.2.0 and 2.3.0 (examples/hosts/README.md; tests/third_party_hosts.py
installs each into an environment of its own).
Run: PYTHON python_sdk_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with mcp)
Adapts: the SDK's own lifecycle, untouched: stdio_client starts the server by its argv words,
ClientSession.initialize() does the legacy handshake, then tools/list and one tools/call of `probe`
(no arguments); leaving both contexts closes the connection the SDK's way (stdin closed, then its
bounded wait and signals). Exit 0 on success; one line on stderr and exit 1 on failure.
"""

from __future__ import annotations

import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def run(server: list[str]) -> None:
    async with stdio_client(StdioServerParameters(command=server[0], args=server[1:])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            if "probe" not in [tool.name for tool in tools.tools]:
                raise RuntimeError("the server lists no tool named probe")
            result = await session.call_tool("probe", {})
            if result.is_error:
                raise RuntimeError("the call of probe returned an error")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python_sdk_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        anyio.run(run, sys.argv[1:])
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"python-sdk host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

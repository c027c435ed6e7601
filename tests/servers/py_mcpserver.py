"""A minimal server on the Python SDK's MCPServer (mcp 2.x), as its documentation shows: a tool "large", whose
answer is "x" * bytes (default 300,000: more than a pipe holds), and a tool "slow", answered after seconds."""

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal-mcpserver")


@server.tool()
def large(bytes: int = 300_000) -> str:
    return "x" * bytes


@server.tool()
async def slow(seconds: float = 0.5) -> str:
    await anyio.sleep(seconds)
    return f"slept {seconds} s"


if __name__ == "__main__":
    server.run()

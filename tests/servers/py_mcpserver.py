"""A minimal server on the Python SDK's MCPServer (mcp 2.x), as its documentation shows: one tool,
"large", whose answer is "x" * bytes (default 300,000: more than a pipe holds)."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal-mcpserver")


@server.tool()
def large(bytes: int = 300_000) -> str:
    return "x" * bytes


if __name__ == "__main__":
    server.run()

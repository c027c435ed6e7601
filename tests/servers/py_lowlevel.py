"""A minimal server on the Python SDK's low-level Server (mcp 2.x), as its module docstring shows:
a tool "large", whose answer is "x" * bytes (default 300,000: more than a pipe holds), and a tool
"slow", answered after seconds (default 0.5)."""

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="large", input_schema={"type": "object", "properties": {"bytes": {"type": "integer"}}})
SLOW = types.Tool(name="slow", input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}})


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL, SLOW])


async def call_tool(ctx, params) -> types.CallToolResult:
    if params.name == "slow":
        seconds = (params.arguments or {}).get("seconds", 0.5)
        await anyio.sleep(seconds)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"slept {seconds} s")])
    size = (params.arguments or {}).get("bytes", 300_000)
    return types.CallToolResult(content=[types.TextContent(type="text", text="x" * size)])


async def main() -> None:
    server = Server("minimal-lowlevel", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)

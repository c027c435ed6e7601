"""L6 by hand: a fresh listen on a server whose catalogue does not change: does an event come within 1 s (QUIET)?"""
import time

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

app = MCPServer("hand")

@app.tool()
def keep() -> str:
    return "keep"

async def main():
    async with Client(app, cache=None) as client:
        async with client.listen(tools_list_changed=True) as sub:
            t, events = time.monotonic(), []
            with anyio.move_on_after(1.0):
                async for event in sub:
                    events.append(f"{type(event).__name__} at {time.monotonic() - t:.2f} s")
            print("L6: events within 1 s of the ack:", events or "none")
anyio.run(main)

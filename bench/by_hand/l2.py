"""L2 by hand: a tool returns a lone surrogate; is the call after it answered (each bounded 5 s)?"""
import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from peers import api_server


async def call(s, name):
    with anyio.move_on_after(5):
        try:
            res = await s.call_tool(name, {})
            return f"answered {res.content[0].text if res.content else res}"
        except Exception as exc:
            return f"failed {type(exc).__name__}: {exc}"
    return "pending at 5 s"

async def main():
    async with stdio_client(api_server()) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            print("L2: bad:", await call(s, "bad"), "| ok after it:", await call(s, "ok"))
anyio.run(main)

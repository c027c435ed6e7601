"""L13 by hand: a tool that exits (and one returning a lone surrogate); how the host's call ends, bounded at 8 s."""
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from peers import api_server


async def main(tool):
    async with stdio_client(api_server()) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            t = time.monotonic()
            outcome = "pending at the 8 s bound"
            with anyio.move_on_after(8):
                try:
                    res = await s.call_tool(tool, {})
                    outcome = f"answered isError={res.isError}"
                except Exception as exc:
                    outcome = f"failed {type(exc).__name__}: {exc}"
            print(f"L13 {tool}: {outcome} after {time.monotonic() - t:.2f} s")
            if outcome.startswith("pending"):
                raise SystemExit  # leave without the shutdown's grace

for tool in ("exit", "bad"):
    try:
        anyio.run(main, tool)
    except BaseException:
        pass

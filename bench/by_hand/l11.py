"""L11 by hand: the host leaves while a 5 s sync tool runs; is the lifespan cleanup logged (checked 12 s later)?"""
import os
import tempfile
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from peers import api_server

log = tempfile.mktemp()

async def main():
    async with stdio_client(api_server({"HAND_LOG": log, "SLOW": "5"})) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(s.call_tool, "slow_sync", {})
                while "tool_start" not in (open(log).read() if os.path.exists(log) else ""):
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
    print("L11: host left")

t = time.monotonic()
try:
    anyio.run(main)
except BaseException as exc:
    print("raised", exc)
time.sleep(max(0, 12 - (time.monotonic() - t)))
lines = open(log).read().split()
print("L11: events", [w for w in lines if not w[0].isdigit()])

"""stdio_server with a minimal loop: each request is answered with a BIG-byte result (0: a small one)."""
import os

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

BIG = int(os.environ.get("BIG", "0"))

async def main():
    async with stdio_server() as (read, write):
        async for message in read:
            if isinstance(message, Exception):
                continue
            request = message.message
            if getattr(request, "id", None) is not None:
                reply = types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result={"data": "x" * BIG})
                await write.send(SessionMessage(reply))

anyio.run(main)

"""An MCPServer for the hand checks: tools exit, bad, ok, slow_sync (SLOW seconds); its lifespan logs to HAND_LOG."""
import contextlib
import os
import sys
import time

from mcp.server.mcpserver import MCPServer

LOG = os.environ.get("HAND_LOG")


def log(text):
    if LOG:
        with open(LOG, "a") as f:
            f.write(f"{time.monotonic():.3f} {text}\n")


@contextlib.asynccontextmanager
async def lifespan(server):
    log("lifespan_start")
    try:
        yield {}
    finally:
        log("lifespan_cleanup")


app = MCPServer("hand", lifespan=lifespan)


@app.tool()
async def exit() -> str:
    sys.exit(3)


@app.tool()
async def bad() -> str:
    return os.fsdecode(b"bad-\xff-name")


@app.tool()
async def ok() -> str:
    return "ok"


@app.tool()
def slow_sync() -> str:
    log("tool_start")
    time.sleep(float(os.environ.get("SLOW", "5")))
    log("tool_finished")
    return "done"


app.run()

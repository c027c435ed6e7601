"""L3 and L4 by hand, through ClientSessionGroup and list_server.py.

l3: two servers listing the same tool: the second connect is rejected; how many children are alive?
l4: one session registered twice (old, then new): which tools are left after its disconnect?
"""

import os
import sys

import anyio
from mcp import ClientSession
from mcp.client.session_group import ClientSessionGroup
from mcp.client.stdio import StdioServerParameters, stdio_client

LIST_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "list_server.py")


def server(lists: str, name: str = "hand") -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[LIST_SERVER, lists, name], env={"PYTHONPATH": ""})


def live_children() -> list[int]:
    me = os.getpid()
    tasks = os.listdir(f"/proc/{me}/task")
    kids = [int(c) for tid in tasks for c in open(f"/proc/{me}/task/{tid}/children").read().split()]
    return [kid for kid in kids if open(f"/proc/{kid}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX"]


async def l3() -> None:
    async with ClientSessionGroup() as group:
        await group.connect_to_server(server("dup", "a"))
        try:
            await group.connect_to_server(server("dup", "b"))
            outcome = "accepted"
        except Exception as exc:
            outcome = f"rejected ({type(exc).__name__})"
        print(f"L3: second connect {outcome}: {len(group.sessions)} session(s), {len(live_children())} children alive")


async def l4() -> None:
    async with ClientSessionGroup() as group:
        async with stdio_client(server("old/new")) as (read, write), ClientSession(read, write) as session:
            result = await session.initialize()
            for _ in range(2):
                await group.connect_with_session(result.server_info, session)
            registered = sorted(group.tools)
            await group.disconnect_from_server(session)
            print(f"L4: registered {registered}, left after disconnect {sorted(group.tools)}")


if __name__ == "__main__":
    anyio.run(globals()[sys.argv[1]])

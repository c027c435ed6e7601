"""Recipe: huggingface_hub's MCPClient (what its tiny-agents run servers with) as a host under the host contract
(no model calls).

Host: huggingface-hub[mcp], pinned 2.4.0, on mcp 1.30.0 (its extra bounds mcp below 2; tests/ecosystem.toml,
tests/ecosystem.py installs both into an environment of their own).
Run: PYTHON huggingface_hub_client.py SERVER_COMMAND [SERVER_ARGS...]   (PYTHON: an interpreter with it)
Adapts: what an Agent does with a stdio server around its model turns, without a model: the client needs a
model's name to be made (it is never called), `async with MCPClient(...)`, add_mcp_server("stdio",
command=..., args=...) starts the server by its argv words, initializes and lists its tools (the library's
own steps), the call of `probe` goes through the session the client keeps for that tool (client.sessions,
as its agent loop calls a tool), and leaving the context runs its cleanup (the connection closed the
library's way). Every other option is the library's default. Exit 0 on success; one line on stderr and exit
1 on failure.
"""

from __future__ import annotations

import asyncio
import sys

from huggingface_hub import MCPClient

MODEL = "no-model-is-called"  # MCPClient requires a model or a base URL; no request reaches either


async def run(server: list[str]) -> None:
    async with MCPClient(model=MODEL) as client:
        await client.add_mcp_server("stdio", command=server[0], args=server[1:])
        if "probe" not in client.sessions:
            raise RuntimeError("the server lists no tool named probe")
        result = await client.sessions["probe"].call_tool("probe", {})
        if result.isError:
            raise RuntimeError("the call of probe returned an error")


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: huggingface_hub_client.py SERVER_COMMAND [SERVER_ARGS...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1:]))
    except Exception as exc:  # the contract's failure: one line, whatever the host raised
        print(f"huggingface_hub host failed: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

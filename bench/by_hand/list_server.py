"""A stdlib MCP server: initialize, then tools/list answers the n-th of argv[1]'s lists on its n-th call.

argv[1]: lists of tool names, "/" between lists, "+" between names (old/new: old first, new after); argv[2]: its name.
"""

import json
import sys

lists = [part.split("+") for part in sys.argv[1].split("/")]
name = sys.argv[2] if len(sys.argv) > 2 else "hand"
calls = 0
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message.get("method"), {}
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        info = {"name": name, "version": "1"}
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "tools/list":
        names = lists[min(calls, len(lists) - 1)]
        calls += 1
        result = {"tools": [{"name": tool, "inputSchema": {"type": "object"}} for tool in names]}
    elif method in ("prompts/list", "resources/list"):
        result = {method.split("/")[0]: []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)

/**
 * Recipe: the AI SDK's MCP client (createMCPClient + StdioMCPTransport) as a host under the host contract.
 *
 * Host: @ai-sdk/mcp from npm, pinned 2.0.99 (examples/hosts/README.md; tests/third_party_hosts.py
 * installs it into an npm prefix of its own).
 * Run: NODE_PATH=PREFIX/node_modules node ai_sdk_mcp_client.cjs SERVER_COMMAND [SERVER_ARGS...]
 * (CommonJS, so that NODE_PATH finds the package wherever it is installed.)
 * Adapts: what generateText does with an MCP client's tools, without a model: createMCPClient with the
 * package's StdioMCPTransport starts the server by its argv words and initializes, tools() lists the
 * server's tools as AI SDK tools, the probe tool's execute() makes one tools/call (no arguments), and
 * client.close() closes the transport the package's way. Every option is the package's default.
 * Exit 0 on success; one line on stderr and exit 1 on failure; either way node exits when its
 * event loop is empty.
 */
"use strict";

const { createMCPClient } = require("@ai-sdk/mcp");
const { StdioMCPTransport } = require("@ai-sdk/mcp/mcp-stdio");

async function run(server) {
  const client = await createMCPClient({
    transport: new StdioMCPTransport({ command: server[0], args: server.slice(1) }),
  });
  try {
    const tools = await client.tools();
    if (!tools.probe) throw new Error("the server lists no tool named probe");
    const result = await tools.probe.execute({}, { toolCallId: "probe-1", messages: [] });
    if (result && result.isError) throw new Error("the call of probe returned an error");
  } finally {
    await client.close();
  }
}

if (process.argv.length < 3) {
  process.stderr.write("usage: ai_sdk_mcp_client.cjs SERVER_COMMAND [SERVER_ARGS...]\n");
  process.exit(2);
}
// exitCode, not exit(): node exits when nothing the client left behind keeps its event loop alive, as a host would
run(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (error) => {
    process.stderr.write(`ai-sdk-mcp host failed: ${String(error && error.message).split("\n")[0]}\n`);
    process.exitCode = 1;
  },
);

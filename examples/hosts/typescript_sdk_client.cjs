/**
 * Recipe: the MCP TypeScript SDK's client (Client + StdioClientTransport) as a host under the host contract.
 *
 * Host: @modelcontextprotocol/sdk from npm, pinned 1.32.2 (examples/hosts/README.md;
 * tests/third_party_hosts.py installs it into an npm prefix of its own).
 * Run: NODE_PATH=PREFIX/node_modules node typescript_sdk_client.cjs SERVER_COMMAND [SERVER_ARGS...]
 * (CommonJS, so that NODE_PATH finds the SDK wherever it is installed: ES modules ignore NODE_PATH.)
 * Adapts: the SDK's own lifecycle, untouched: StdioClientTransport starts the server by its argv
 * words (stderr inherited, the SDK's default), Client.connect() does the legacy initialize
 * handshake, then tools/list and one tools/call of `probe` (no arguments); client.close() closes
 * the transport the SDK's way (stdin ended, then its bounded waits and signals). Exit 0 on success;
 * one line on stderr and exit 1 on failure; either way node exits when its event loop is empty.
 */
"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function run(server) {
  const transport = new StdioClientTransport({ command: server[0], args: server.slice(1) });
  const client = new Client({ name: "stdio-probe-recipe", version: "1" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === "probe")) throw new Error("the server lists no tool named probe");
    const result = await client.callTool({ name: "probe", arguments: {} });
    if (result.isError) throw new Error("the call of probe returned an error");
  } finally {
    await client.close();
  }
}

if (process.argv.length < 3) {
  process.stderr.write("usage: typescript_sdk_client.cjs SERVER_COMMAND [SERVER_ARGS...]\n");
  process.exit(2);
}
// exitCode, not exit(): node exits when nothing the SDK left behind keeps its event loop alive, as a host would
run(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (error) => {
    process.stderr.write(`typescript-sdk host failed: ${String(error && error.message).split("\n")[0]}\n`);
    process.exitCode = 1;
  },
);

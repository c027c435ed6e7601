// A minimal server on the TypeScript SDK (@modelcontextprotocol/sdk 1.x), as its README shows:
// a tool "large", whose answer is "x" * bytes (default 300,000: more than a pipe holds), and a tool
// "slow", answered after seconds (default 0.5).
// Run by node with NODE_PATH unset: the SDK is resolved from the node_modules folder given first.
import { createRequire } from "node:module";

const require = createRequire(process.argv[2] + "/");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "minimal-ts-sdk", version: "1.0.0" });
server.tool("large", { bytes: z.number().optional() }, async ({ bytes }) => ({
  content: [{ type: "text", text: "x".repeat(bytes ?? 300000) }],
}));
server.tool("slow", { seconds: z.number().optional() }, async ({ seconds }) => {
  await new Promise((resolve) => setTimeout(resolve, (seconds ?? 0.5) * 1000));
  return { content: [{ type: "text", text: `slept ${seconds ?? 0.5} s` }] };
});
await server.connect(new StdioServerTransport());

# Recipe: the MCP Inspector's CLI mode as a host under the host contract.
#
# Host: @modelcontextprotocol/inspector from npm, pinned 0.15.0 (the last that runs on node 20; 0.16
# and later need node 22; examples/hosts/README.md; tests/third_party_hosts.py installs it into an
# npm prefix of its own).
# Run: MCP_HOST_PROGRAM=PREFIX/node_modules/.bin/mcp-inspector sh inspector_cli.sh SERVER_COMMAND [SERVER_ARGS...]
# (without MCP_HOST_PROGRAM: mcp-inspector from PATH)
# Adapts: the Inspector runs one method per run, so this runs tools/call of `probe` (no arguments):
# it starts the server by its argv words, initializes (legacy handshake), lists the tools itself
# (its tools/call does), calls probe, disconnects and exits. The Inspector is two processes:
# mcp-inspector starts `node cli/build/index.js`, the client, and passes it the server's words
# without the `--`, so a server option spelt like one of the Inspector's (--method, --tool-name,
# --transport, ...) is taken by the Inspector: the server's words here must avoid them.
# Its exit code and its stderr are the Inspector's own (non-zero with its error on failure).
exec "${MCP_HOST_PROGRAM:-mcp-inspector}" --cli --method tools/call --tool-name probe -- "$@"

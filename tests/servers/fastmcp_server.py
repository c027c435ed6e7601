"""A minimal server on standalone fastmcp, as its documentation shows: one tool, "large", whose
answer is "x" * bytes (default 300,000: more than a pipe holds)."""

from fastmcp import FastMCP

server = FastMCP("minimal-fastmcp")


@server.tool
def large(bytes: int = 300_000) -> str:
    return "x" * bytes


if __name__ == "__main__":
    server.run(show_banner=False)

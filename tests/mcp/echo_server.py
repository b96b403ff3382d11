"""A real MCP server (the SDK's MCPServer) that echoes what it was given as secrets: an
environment variable (stdio) or an HTTP request header (Streamable HTTP).

    python tests/mcp/echo_server.py            # stdio
    python tests/mcp/echo_server.py --http     # Streamable HTTP on 127.0.0.1, a free port

With `--http` the first line on stdout is the endpoint (`http://127.0.0.1:PORT/mcp`), written
once the socket listens, so a test reads it instead of guessing a port or polling.

Tools: `env(name)` returns the variable's value and also prints it to stderr (which picobot
sends to its log file); `header(name)` returns the request's header; `shout(text)` is an
`isError` result naming the text.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent


def build() -> MCPServer:
    server = MCPServer("picobot-echo", version="1.0")

    @server.tool()
    def env(name: str) -> str:
        """Returns an environment variable of the server process."""
        value = os.environ.get(name, "(unset)")
        print(f"echo server: {name} is {value}", file=sys.stderr, flush=True)
        return f"{name}={value}"

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """Returns a header of the HTTP request that carried this call."""
        headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
        return f"{name}: {headers.get(name.lower(), '(none)')}"

    @server.tool()
    def shout(text: str) -> CallToolResult:
        """An error result."""
        return CallToolResult(content=[TextContent(type="text", text=f"no: {text}")], is_error=True)

    return server


async def serve_http(server: MCPServer) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args()
    server = build()
    if args.http:
        anyio.run(serve_http, server)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The test MCP server (tests/support/mcp_test_server.py's tools) over HTTP on 127.0.0.1.

    python -m tests.support.mcp_http_server --transport streamable|sse
        [--require-header NAME=VALUE] [--marker DIR]

`streamable` serves Streamable HTTP at /mcp; `sse` serves only the old SSE transport (GET
/sse, POST /messages/), so a client must fall back to it. With `--require-header`, every
request without that header (exactly) is answered 401. It listens on a free port and prints
`PORT <n>` on stdout once the socket listens.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import uvicorn

from tests.support.mcp_test_server import _mark, build


class RequireHeader:
    """ASGI middleware: 401 for a request without the header (the server checks it)."""

    def __init__(self, app: Any, name: str, value: str, marker: Path | None) -> None:
        self.app, self.name, self.value, self.marker = app, name.lower().encode(), value, marker

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = dict(scope["headers"]).get(self.name, b"").decode("latin-1")
            if got != self.value:
                _mark(self.marker, "refused", got)
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
            _mark(self.marker, "authorized", got)
        await self.app(scope, receive, send)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=("streamable", "sse"), required=True)
    parser.add_argument("--require-header", default="")
    parser.add_argument("--marker", type=Path)
    args = parser.parse_args(argv)
    server = build(args.marker)
    app: Any = server.streamable_http_app() if args.transport == "streamable" else server.sse_app()
    if args.require_header:
        name, _, value = args.require_header.partition("=")
        app = RequireHeader(app, name, value, args.marker)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())

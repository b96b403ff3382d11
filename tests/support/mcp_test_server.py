"""A real MCP server (the SDK's MCPServer) for the MCP tests, over stdio by default.

    python -m tests.support.mcp_test_server [--marker DIR] [--tag TEXT] [--schemas]

Tools: `echo` (text back), `peek` (the same, marked readOnlyHint), `sleep` (waits `seconds`; huge = never answers), `crash`
(the process exits mid-call), `image` (an ImageContent), `structured` (structured content),
`fail` (an isError result), `noisy` (ANSI escapes and `size` characters of text), `flood`
(writes `megabytes` MiB to stderr in 1 MiB writes, then FLOOD_LAST_LINE, and exits 3); with
`--schemas` also `locate` (a valid $ref) and `broken` (an invalid inputSchema).

With `--marker DIR` the server writes files there so a test can see what it received:
`started` (its pid) once it runs, `call-<tool>` when a call starts, and `cancelled` (the
request id) when a `notifications/cancelled` arrives. `--tag` is only there to be found in
the process's argv (the orphan tests look for it in /proc).

`build()` is reused by tests/support/mcp_http_server.py for the HTTP transports.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAHnOcQAAAAABJRU5ErkJggg=="
)
STDERR_LINE = "mcp-test-server: listening on stdin"
"""Written to stderr at start: it belongs in picobot's log, never on its terminal."""
ANSI = "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J"
FLOOD_LAST_LINE = "mcp-test-server: FATAL out of patience after the flood"
"""The flood's last stderr line before the process exits: it must be in picobot's log."""


class Weather(BaseModel):
    city: str
    celsius: float


def _mark(marker: Path | None, name: str, text: str = "") -> None:
    if marker is not None:
        tmp = marker / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(marker / name)  # atomic: a reader never sees half a file


class Point(BaseModel):
    x: float
    y: float


def build(marker: Path | None = None, *, schemas: bool = False) -> MCPServer:
    """The server with its tools; `marker` is where it records what it received. With
    `schemas`, two more: `locate` (a $ref into $defs, valid) and `broken` (an inputSchema
    that is not a valid JSON Schema)."""

    async def observe(ctx: Any, call_next: Any) -> Any:
        """Middleware: record `notifications/cancelled` (the dispatcher applies it too)."""
        if ctx.method == "notifications/cancelled":
            rid = (ctx.params or {}).get("requestId")
            _mark(marker, "cancelled", str(rid))
        return await call_next(ctx)

    server = MCPServer("picobot-test", version="1.0", middleware=[observe])

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text unchanged."""
        _mark(marker, "call-echo", text)
        return text

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def peek(text: str) -> str:
        """Marked readOnlyHint: it runs in plan mode (it records the call all the same)."""
        _mark(marker, "call-peek", text)
        return f"peeked {text}"

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Waits `seconds`, then says so."""
        _mark(marker, "call-sleep", str(seconds))
        await anyio.sleep(seconds)
        return f"slept {seconds:g} s"

    @server.tool()
    def crash() -> str:
        """Exits the server process in the middle of the call."""
        _mark(marker, "call-crash")
        sys.stdout.flush()
        os._exit(3)

    @server.tool()
    def image() -> Image:
        """A 1x1 PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    def structured(city: str) -> Weather:
        """Structured content (and its JSON as text)."""
        return Weather(city=city, celsius=21.5)

    @server.tool()
    def fail(reason: str = "it broke") -> CallToolResult:
        """A result with isError set."""
        return CallToolResult(content=[TextContent(type="text", text=reason)], is_error=True)

    @server.tool()
    def noisy(size: int = 0) -> str:
        """ANSI escapes, then `size` characters of text."""
        return ANSI + " " + "x" * size

    @server.tool()
    def flood(megabytes: int = 1) -> str:
        """Floods stderr, then dies saying why (on its last line)."""
        _mark(marker, "call-flood", str(megabytes))
        chunk = (("x" * 1023 + "\n") * 1024).encode()
        for _ in range(megabytes):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(f"{FLOOD_LAST_LINE}\n".encode())
        sys.stderr.flush()
        os._exit(3)

    if schemas:

        @server.tool()
        def locate(point: Point) -> str:
            """A model-typed argument: its schema refers to $defs."""
            return f"at {point.x:g},{point.y:g}"

        @server.tool()
        def broken(value: str = "") -> str:
            """Listed with a schema no validator accepts."""
            return value

        tool = server._tool_manager.get_tool("broken")
        assert tool is not None
        tool.parameters = {"type": "object", "properties": {"value": {"type": "strng"}}}
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marker", type=Path)
    parser.add_argument("--tag", default="")
    parser.add_argument("--schemas", action="store_true")
    args = parser.parse_args(argv)
    server = build(args.marker, schemas=args.schemas)
    _mark(args.marker, "started", str(os.getpid()))
    print(f"{STDERR_LINE} {args.tag}".rstrip(), file=sys.stderr, flush=True)
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())

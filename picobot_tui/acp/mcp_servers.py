"""The MCP servers a client passes in `session/new` / `session/load`, as picobot's
`McpServerConfig` (tools.mcpServers entries): connected for that session beside the
configured ones, by the same MCP client. stdio, Streamable HTTP and SSE are taken (the
`mcpCapabilities` picobot advertises); the unstable ACP-tunnelled kind is refused."""

from __future__ import annotations

from typing import Any

from acp import schema as s
from pydantic import ValidationError

from picobot_tui.core.shapes.mcp_server import McpServerConfig


class McpServerProblem(ValueError):
    """A server the client passed that picobot cannot connect: the request's params are bad."""


def convert(servers: list[Any] | None) -> dict[str, McpServerConfig]:
    out: dict[str, McpServerConfig] = {}
    for server in servers or ():
        name = (getattr(server, "name", "") or "").strip()
        if not name:
            raise McpServerProblem("an MCP server in mcpServers has an empty name")
        if name in out:
            raise McpServerProblem(f"two MCP servers in mcpServers are named {name!r}")
        try:
            if isinstance(server, s.McpServerStdio):
                out[name] = McpServerConfig(
                    type="stdio",
                    command=server.command,
                    args=list(server.args),
                    env={e.name: e.value for e in server.env},
                )
            elif isinstance(server, (s.HttpMcpServer, s.SseMcpServer)):
                out[name] = McpServerConfig(
                    type="sse" if isinstance(server, s.SseMcpServer) else "http",
                    url=server.url,
                    headers={h.name: h.value for h in server.headers},
                )
            else:
                raise McpServerProblem(
                    f"MCP server {name!r}: only stdio, http and sse servers are supported"
                )
        except ValidationError as e:
            first = e.errors()[0].get("msg", str(e)) if e.errors() else str(e)
            raise McpServerProblem(f"MCP server {name!r}: {first}") from None
    return out

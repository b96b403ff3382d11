"""The `tools.mcpServers` entries (nanobot-compatible keys) and their checks."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, model_validator
from pydantic.alias_generators import to_snake

from picobot_tui.core.settings_base import Section

Transport = Literal["stdio", "http", "sse"]

DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds an MCP tool call may take (`toolTimeout`): the same as exec's default."""


class McpServerConfig(Section):
    """One MCP server: `command` (stdio) or `url` (Streamable HTTP, falling back to SSE)."""

    # A typo (`comand`) is an error naming the key, not a server that silently has no command.
    model_config = ConfigDict(extra="forbid")

    type: Transport | None = None
    """`stdio`, `http` or `sse`; default: `stdio` with `command`, `http` with `url`."""
    command: str | None = None
    """The program that runs the server (stdio)."""
    args: list[str] = []
    """Its arguments."""
    env: dict[str, str] = {}
    """Extra environment variables for the server process. Values are secrets (scrubbed)."""
    cwd: str | None = None
    """Working directory of the server process, relative to the workspace (default: a
    private folder, never the workspace: see MCP servers)."""
    url: str | None = None
    """The server's endpoint (Streamable HTTP or SSE)."""
    headers: dict[str, str] = {}
    """HTTP headers sent to the server. Values are secrets (scrubbed)."""
    enabled_tools: list[str] | None = None
    """Only these of the server's tools are offered to the model (default: all)."""
    tool_timeout: float = Field(default=DEFAULT_TOOL_TIMEOUT, gt=0)
    """Seconds one call may take before it fails as timed out."""
    trust: Literal["ask", "auto"] = "ask"
    """`ask`: calls follow `tools.approval`; `auto`: calls run without asking (under every
    policy, but never in an untrusted workspace)."""

    @property
    def transport(self) -> Transport:
        if self.type is not None:
            return self.type
        return "stdio" if self.command else "http"

    @model_validator(mode="before")
    @classmethod
    def _snake_keys(cls, data: Any) -> Any:
        """camelCase keys (`toolTimeout`) from wherever the entry comes: the config file is
        converted by the loader, but `PICOBOT_TOOLS__MCP_SERVERS` JSON and ACP clients are not."""
        if isinstance(data, dict):
            return {to_snake(k) if isinstance(k, str) else k: v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _check(self) -> McpServerConfig:
        if self.type is None and not self.command and not self.url:
            raise ValueError(
                "`command` or `url` is missing: give the program to run (stdio) or the "
                "server's address (HTTP)"
            )
        if self.type is None and self.command and self.url:
            raise ValueError("give `command` (a stdio server) or `url` (HTTP), not both")
        if self.transport == "stdio":
            if not (self.command or "").strip():
                raise ValueError("`command` is missing: a stdio server needs the program to run")
        else:
            if not self.url:
                raise ValueError(f"`url` is missing: an {self.transport} server needs its address")
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"`url` must be an http:// or https:// address, got {self.url!r}")
        return self


def check_server_names(servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
    """Server names become part of tool names (`mcp_<server>_<tool>`): none may be blank."""
    for name in servers:
        if not name.strip():
            raise ValueError("an MCP server has an empty name")
    return servers

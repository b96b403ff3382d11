"""An MCP server's tool as a picobot Tool: approved like exec, results like built-ins."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from picobot_tui.core.mcp.names import tool_name
from picobot_tui.core.mcp.results import to_tool_result
from picobot_tui.core.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from picobot_tui.core.mcp.server import McpServer, ToolSpec

MAX_DESCRIPTION = 1024
"""Characters of a server's tool description offered to the model (OpenAI's limit)."""


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Function parameters must be an object schema; a server's may omit parts of it."""
    out = dict(schema)
    if out.get("type") != "object":
        out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


class McpTool(Tool):
    """`mcp_<server>_<tool>`: calls go to the server's owner; approval follows `trust`."""

    mutating = True  # a server tool can do anything: it passes through approval

    def __init__(
        self, server: McpServer, spec: ToolSpec, taken: set[str], connect_timeout: float
    ) -> None:
        self.server = server
        self.server_name = server.name
        self.tool = spec.name
        self.name = tool_name(server.name, spec.name, taken)
        description = " ".join(spec.description.split()) or f"The {spec.name} tool."
        self.description = f"[MCP server {server.name}] {description}"[:MAX_DESCRIPTION]
        self.parameters = _object_schema(spec.input_schema)
        self.connect_timeout = connect_timeout
        self.trusted = server.config.trust == "auto"
        self.read_only = spec.read_only

    def reads_only(self, args: dict[str, Any]) -> bool:
        # The server's own `readOnlyHint` (the user chose the server); else it may do anything.
        return self.read_only

    def needs_approval(self, args: dict[str, Any]) -> bool:
        # Always through the policy: `trust: "auto"` (self.trusted) skips the question, but
        # an untrusted workspace still refuses the call.
        return True

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        arguments = json.dumps(args, indent=2, ensure_ascii=False)
        return f"MCP server: {self.server_name}\ntool: {self.tool}\narguments:\n{arguments}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.server.call(self.tool, args, self.connect_timeout)
        return to_tool_result(result)

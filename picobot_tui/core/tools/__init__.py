"""Built-in tools, confined to the workspace. Importing this package is cheap: the registry,
the tools and their heavier dependencies (jsonschema, httpx) load only when used."""

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult

__all__ = ["Tool", "ToolContext", "ToolError", "ToolResult"]

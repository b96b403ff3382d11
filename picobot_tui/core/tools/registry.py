"""The tool registry: schemas for the model, argument validation, and safe execution.

Everything a tool returns passes through the same pipeline before it can reach the model,
the session file or a terminal: sanitise (bytes decoded, ANSI escapes and control characters
removed) -> scrub known secrets -> truncate to tools.toolResultMaxChars with a marker.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError, ToolResult
from picobot_tui.core.tools.text import sanitize, truncate
from picobot_tui.core.visible import Preview, cap_text, visible

# An approval preview shows at most this much; the rest is marked and reachable in full.
MAX_PREVIEW_CHARS = 20_000
MAX_PREVIEW_LINES = 400
_VALUE_REPR_CHARS = 60


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _VALUE_REPR_CHARS else text[: _VALUE_REPR_CHARS - 1] + "…"


def _describe(error: Any) -> str:
    """One short sentence for a jsonschema ValidationError."""
    where = "/".join(str(p) for p in error.absolute_path)
    arg = f"argument `{where}`" if where else "arguments"
    v = error.validator
    if v == "required":
        missing = [k for k in error.validator_value if k not in (error.instance or {})]
        return "missing required argument " + ", ".join(f"`{k}`" for k in missing)
    if v == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(str(k) for k in error.instance if k not in allowed)
        return "unexpected argument " + ", ".join(f"`{_short(k)[1:-1]}`" for k in extra)
    if v == "type":
        got = _json_type(error.instance)
        return f"{arg} must be {error.validator_value}, got {got} {_short(error.instance)}"
    if v == "enum":
        options = ", ".join(map(str, error.validator_value))
        return f"{arg} must be one of {options}; got {_short(error.instance)}"
    if v in {
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }:
        return f"{arg}: {_short(error.instance)} breaks {v}={error.validator_value}"
    return f"{arg}: {error.message[:200]}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _signature(tool: Tool) -> str:
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", ()))
    parts = [f"{k}{'' if k in required else '?'}: {v.get('type', 'any')}" for k, v in props.items()]
    return "{" + ", ".join(parts) + "}"


class ToolRegistry:
    """The tools one agent may use, all sharing one ToolContext."""

    def __init__(
        self,
        tools: list[Tool],
        ctx: ToolContext,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.ctx = ctx
        self.scrub = scrub
        if ctx.scrub is None and isinstance(scrub, Scrubber):
            ctx.scrub = scrub
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._validators: dict[str, Any] = {}

    def add(self, tool: Tool) -> None:
        """Offer one more tool (an MCP server's, once it connects)."""
        if tool.name in self._tools:
            raise ValueError(f"two tools are named {tool.name!r}")
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)
        self._validators.pop(name, None)

    # -- what the model sees -----------------------------------------------------------
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI function-tool definitions, in registration order."""
        return [t.schema(self.ctx) for t in self._tools.values()]

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def is_mutating(self, name: str) -> bool:
        """True for tools that need approval. Unknown names are False: they never run."""
        tool = self._tools.get(name)
        return bool(tool and tool.mutating)

    # -- arguments -----------------------------------------------------------------------
    def _tool(self, name: str) -> Tool:
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolError(
                f"unknown tool {_short(name)}; available tools: {', '.join(self._tools)}"
            )
        return tool

    def parse_arguments(self, name: str, raw: str | dict[str, Any] | None) -> dict[str, Any]:
        """Decode and validate a tool call's arguments; ToolError says what is wrong.

        `raw` is the JSON text the model produced; "" (or None) means no arguments. An
        already-decoded dict is accepted too.
        """
        tool = self._tool(name)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            args: Any = {}
        elif isinstance(raw, dict):
            args = raw
        elif isinstance(raw, str | bytes):
            try:
                args = json_input.loads(raw)
            except json_input.JsonInputError as e:
                hint = (
                    f" Send one JSON object like {_signature(tool)}." if e.kind == "syntax" else ""
                )
                raise ToolError(f"arguments for {name} are not valid JSON: {e}.{hint}") from None
        else:
            raise ToolError(f"arguments for {name} must be a JSON object string")
        return self.validate(name, args)

    def validate(self, name: str, args: Any) -> dict[str, Any]:
        """Check decoded arguments against the tool's schema; returns them normalised."""
        tool = self._tool(name)
        if not isinstance(args, dict):
            raise ToolError(
                f"arguments for {name} must be a JSON object, got {_json_type(args)}. "
                f"Expected {_signature(tool)}."
            )
        validator = self._validators.get(name)
        if validator is None:
            from jsonschema import Draft202012Validator

            validator = self._validators[name] = Draft202012Validator(tool.parameters)
        errors = sorted(validator.iter_errors(args), key=lambda e: (list(e.path), e.validator))
        if errors:
            msgs = list(dict.fromkeys(_describe(e) for e in errors))
            more = f" (and {len(msgs) - 3} more)" if len(msgs) > 3 else ""
            raise ToolError(
                f"invalid arguments for {name}: {'; '.join(msgs[:3])}{more}. "
                f"Expected {_signature(tool)}."
            )
        # JSON Schema counts 3.0 as an integer; hand the tool a real int.
        props = tool.parameters.get("properties", {})
        return {
            k: int(v) if props.get(k, {}).get("type") == "integer" and isinstance(v, float) else v
            for k, v in args.items()
        }

    # -- running -------------------------------------------------------------------------
    def clean(self, text: object) -> str:
        """Sanitise, scrub and truncate: what every result goes through."""
        out = sanitize(text)
        if self.scrub is not None:
            out = self.scrub(out)
        return truncate(out, self.ctx.config.tool_result_max_chars)

    def preview(self, name: str, args: dict[str, Any]) -> str:
        """What an approval prompt shows (capped, with a marker). Never raises."""
        return self.approval_preview(name, args).text

    def approval_preview(self, name: str, args: dict[str, Any]) -> Preview:
        """The preview, shown and in full. Never raises: a problem becomes the text.

        Escapes and invisible characters are made visible, never deleted (a deleted OSC would
        hide its payload), then secrets are scrubbed, then the text is capped with a marker
        saying how much is left out; `full` keeps everything for a "show all" view.
        """
        try:
            tool = self._tool(name)
            text = tool.preview(self.validate(name, args), self.ctx)
        except ToolError as e:
            text = f"Error: {e}"
        except Exception as e:
            text = f"Error: preview failed: {type(e).__name__}: {e}"
        return self._preview(text)

    async def approval_preview_async(self, name: str, args: dict[str, Any]) -> Preview:
        """`approval_preview` through the tool's `preview_async`: a file tool then diffs the
        text its `ctx.files` gives (an editor's buffer). Never raises (but CancelledError)."""
        try:
            tool = self._tool(name)
            text = await tool.preview_async(self.validate(name, args), self.ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as e:
            text = f"Error: {e}"
        except Exception as e:
            text = f"Error: preview failed: {type(e).__name__}: {e}"
        return self._preview(text)

    def _preview(self, text: object) -> Preview:
        full = visible(text if isinstance(text, str) else str(text))
        if self.scrub is not None:
            full = self.scrub(full)
        shown, hidden = cap_text(full, MAX_PREVIEW_LINES, MAX_PREVIEW_CHARS)
        return Preview(shown, full, hidden)

    def needs_approval(self, name: str, args: dict[str, Any]) -> bool:
        """Whether this (validated) call passes through approval. Unknown names: False."""
        tool = self._tools.get(name)
        return bool(tool and (tool.needs_approval(args) or tool.approval_host(args)))

    def reads_only(self, name: str, args: dict[str, Any]) -> bool:
        """Whether this (validated) call changes nothing (it runs in plan mode)."""
        tool = self._tools.get(name)
        return bool(tool and tool.reads_only(args))

    def approval_host(self, name: str, args: dict[str, Any]) -> str | None:
        """The host a network call reaches (its approval is per host), else None."""
        tool = self._tools.get(name)
        return tool.approval_host(args) if tool else None

    async def execute(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Run a tool. Never raises (except CancelledError); failures are error results."""
        try:
            tool = self._tool(name)
            out = await tool.run(self.validate(name, args), self.ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as e:
            return ToolResult(ok=False, content=self.clean(f"Error: {e}"), status="error")
        except Exception as e:
            return ToolResult(
                ok=False,
                content=self.clean(f"Error: {name} failed: {type(e).__name__}: {e}"),
                status="error",
            )
        if isinstance(out, ToolResult):
            return ToolResult(ok=out.ok, content=self.clean(out.content), status=out.status)
        return ToolResult(ok=True, content=self.clean(out))

    async def call(self, name: str, raw: str | dict[str, Any] | None) -> ToolResult:
        """parse_arguments + execute in one step; argument errors become error results."""
        try:
            args = self.parse_arguments(name, raw)
        except ToolError as e:
            return ToolResult(ok=False, content=self.clean(f"Error: {e}"), status="error")
        return await self.execute(name, args)


def builtin_tools() -> list[Tool]:
    """One instance of every built-in tool."""
    from picobot_tui.core.tools.edit_file import EditFileTool
    from picobot_tui.core.tools.exec.tool import ExecTool
    from picobot_tui.core.tools.list_dir import ListDirTool
    from picobot_tui.core.tools.read_file import ReadFileTool
    from picobot_tui.core.tools.todo import TodoTool
    from picobot_tui.core.tools.web_fetch import WebFetchTool
    from picobot_tui.core.tools.write_file import WriteFileTool

    return [
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListDirTool(),
        ExecTool(),
        WebFetchTool(),
        TodoTool(),
    ]


def default_registry(ctx: ToolContext, scrub: Callable[[str], str] | None = None) -> ToolRegistry:
    """A registry of all seven built-in tools."""
    return ToolRegistry(builtin_tools(), ctx, scrub)

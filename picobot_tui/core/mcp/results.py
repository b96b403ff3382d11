"""An MCP `CallToolResult` as the text the model reads.

Text is kept; images, audio and binary resources become a short placeholder the model can
read; structured content is added as JSON. Read by attribute, so this module needs no
import of the SDK's types (~0.2 s).
"""

from __future__ import annotations

import json
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.tools.base import ToolResult


def _size(data: str | None) -> str:
    if not data:
        return "empty"
    n = len(data.rstrip("=")) * 3 // 4  # base64, its padding not counted
    return f"{n:,} bytes" if n < 10_000 else f"{n / 1024:,.0f} KB"


def block_text(block: Any) -> str:
    """One content block as text."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or kind
        return f"[{kind}: {mime}, {_size(getattr(block, 'data', None))}, not shown]"
    if kind == "resource_link":
        uri = getattr(block, "uri", "")
        name = getattr(block, "name", "") or ""
        return f"[resource link: {name} {uri}]".replace("  ", " ")
    if kind == "resource":
        res = getattr(block, "resource", None)
        uri = getattr(res, "uri", "")
        text = getattr(res, "text", None)
        if text is not None:
            return f"[resource {uri}]\n{text}"
        mime = getattr(res, "mime_type", None) or "binary"
        return f"[resource {uri}: {mime}, {_size(getattr(res, 'blob', None))}, not shown]"
    return f"[{kind or 'unknown'} content, not shown]"


def to_tool_result(result: Any) -> ToolResult:
    """The model's view of a call's result; `isError` makes it a tool error."""
    parts = [block_text(b) for b in getattr(result, "content", None) or ()]
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False, default=str)
        # Servers often send the same JSON as text too: include it once.
        texts = [p for p in parts if p.strip()]
        if not (len(texts) == 1 and _echoes(texts[0], structured)):
            parts.append(f"structured content: {dumped}")
    text = "\n".join(p for p in parts if p) or "(no content)"
    if getattr(result, "is_error", False):
        return ToolResult(False, f"Error: {text}", "error")
    return ToolResult(True, text)


def _echoes(text: str, structured: Any) -> bool:
    """Whether the text block already says what the structured content says. The SDK's
    servers wrap a tool's non-object return value as `{"result": value}` and send the value
    as text too: every `-> str` tool would otherwise show its text twice (a 100k text, 200k)."""
    if _same_json(text, structured):
        return True
    if isinstance(structured, dict) and list(structured) == ["result"]:
        value = structured["result"]
        return text == value if isinstance(value, str) else _same_json(text, value)
    return False


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json_input.loads(text) == value)
    except ValueError:
        return False

"""A `session/prompt`'s content blocks as the one user message the loop takes.

Text is kept as it is. A `resource_link` to a file in the session's workspace is read the
way the model's own `read_file` reads it (the same tool: confined by resolved path, binary
refused, big files windowed, and through the client's buffers when it offers them); a link
outside the workspace or to another scheme stays a link the model may ask about. An embedded
text resource is included whole; binary ones, images and audio (not advertised) are named,
not sent.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from acp import schema as s

from picobot_tui.core.tools.base import ToolContext, ToolError
from picobot_tui.core.tools.paths import resolve_in_workspace
from picobot_tui.core.tools.registry import ToolRegistry


def file_path(uri: str) -> str | None:
    """The local path a `file://` URI (or a bare absolute path) names, else None."""
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return unquote(parts.path)
    if not parts.scheme and uri.startswith("/"):
        return uri
    return None


async def _read_link(block: s.ResourceContentBlock, tools: ToolRegistry, ctx: ToolContext) -> str:
    where = block.uri
    path = file_path(block.uri)
    if path is None:
        return f"[Linked resource {block.name}: {where}]"
    try:
        resolved = resolve_in_workspace(path, ctx)
    except ToolError as e:
        return f"[Linked file {where} was not read: {e}]"
    result = await tools.execute("read_file", {"path": str(resolved)})
    if not result.ok:
        return f"[Linked file {where} was not read: {result.content}]"
    return f'<file path="{resolved}">\n{result.content}\n</file>'


async def prompt_text(blocks: list[Any], tools: ToolRegistry) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, s.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, s.ResourceContentBlock):
            parts.append(await _read_link(block, tools, tools.ctx))
        elif isinstance(block, s.EmbeddedResourceContentBlock):
            res = block.resource
            if isinstance(res, s.TextResourceContents):
                parts.append(f'<resource uri="{res.uri}">\n{res.text}\n</resource>')
            else:
                parts.append(
                    f"[Binary resource {res.uri} ({res.mime_type or 'unknown type'}) left out]"
                )
        elif isinstance(block, s.ImageContentBlock):
            parts.append("[An image was attached; picobot does not take images]")
        elif isinstance(block, s.AudioContentBlock):
            parts.append("[Audio was attached; picobot does not take audio]")
    return "\n\n".join(p for p in parts if p)

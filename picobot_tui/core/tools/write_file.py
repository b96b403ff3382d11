"""write_file: create or replace a whole file (atomically)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.file_access import current_text, reader, routes
from picobot_tui.core.tools.paths import FILE_PATH_PARAM, display_path, resolve_in_workspace
from picobot_tui.core.tools.text import encode_utf8, unified_diff


class WriteFileTool(Tool):
    name = "write_file"
    description = (
        "Create a file or replace its whole content. Parent directories are created. "
        "To change part of an existing file, prefer edit_file."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": FILE_PATH_PARAM,
            "content": {"type": "string", "description": "The complete new file content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    mutating = True

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        shown = display_path(path, ctx)
        content = args["content"]
        if path.is_dir():
            raise ToolError(f"{shown} is a directory")
        if not path.exists():
            n = len(content.splitlines())
            return f"new file: {shown} ({n} lines)\n" + unified_diff("", content, shown)
        old = read_text_or_none(path)
        if old is None:
            # No text diff of the old bytes; the new content is shown whole, as for a new file.
            size = path.stat().st_size
            n = len(content.splitlines())
            return (
                f"replace non-UTF-8 file {shown} ({size:,} bytes, not shown) with {n} lines "
                "of text:\n" + unified_diff("", content, shown)
            )
        return unified_diff(old, content, shown)

    async def preview_async(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if reader(ctx) is None:
            return self.preview(args, ctx)
        path = resolve_in_workspace(args["path"], ctx)
        old = await current_text(path, ctx)
        if old is None:  # new, a directory, not UTF-8: judged on disk, as without an editor
            return self.preview(args, ctx)
        return unified_diff(old, args["content"], display_path(path, ctx))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        shown = display_path(path, ctx)
        data = encode_utf8(args["content"])
        _, files = await routes(path, ctx)
        if files is None or not await asyncio.to_thread(_text_or_absent, path):
            # A binary or non-UTF-8 file being replaced is not an editor's text: the disk.
            return await asyncio.to_thread(_write, path, shown, data)
        existed = await asyncio.to_thread(_prepare, path, shown)
        await files.write_text(path, args["content"])
        return _written(shown, data, existed)


def read_text_or_none(path: Path) -> str | None:
    """The file's text, or None when it is not UTF-8 text."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text_or_absent(path: Path) -> bool:
    """True when `path` does not exist or is a UTF-8 file (what a FileAccess may write)."""
    try:
        if not path.exists():
            return True
        return path.is_file() and read_text_or_none(path) is not None
    except OSError:  # unreadable: the disk write says what is wrong, as before
        return False


def _prepare(path: Path, shown: str) -> bool:
    """Refuse a directory or a non-regular file; create the parents. Whether it existed."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    existed = path.exists()
    if existed and not path.is_file():
        raise ToolError(f"{shown} is not a regular file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except NotADirectoryError:
        raise ToolError(f"cannot create {shown}: a parent of it is a file") from None
    except OSError as e:
        raise ToolError(f"cannot write {shown}: {e.strerror or e}") from None
    return existed


def _write(path: Path, shown: str, data: bytes) -> str:
    existed = _prepare(path, shown)
    try:
        atomic_write(path, data)
    except NotADirectoryError:
        raise ToolError(f"cannot create {shown}: a parent of it is a file") from None
    except OSError as e:
        raise ToolError(f"cannot write {shown}: {e.strerror or e}") from None
    return _written(shown, data, existed)


def _written(shown: str, data: bytes, existed: bool) -> str:
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    verb = "overwrote" if existed else "created"
    return f"{verb} {shown} ({lines} lines, {len(data)} bytes)"

"""list_dir: what a directory holds, directories first, marked with '/'."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.paths import display_path, resolve_in_workspace

MAX_ENTRIES = 500


class ListDirTool(Tool):
    name = "list_dir"
    description = (
        "List a directory of the workspace (default: the workspace root). Directories come "
        f"first and end with '/'; symlinks show their target. At most {MAX_ENTRIES} entries."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Directory, relative to the workspace (default: '.').",
            }
        },
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args.get("path", "."), ctx)
        return await asyncio.to_thread(_list, path, display_path(path, ctx))


def _list(path: Path, shown: str) -> str:
    if not path.exists():
        raise ToolError(f"directory not found: {shown}")
    if not path.is_dir():
        raise ToolError(f"{shown} is a file, not a directory; use read_file to read it")
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError as e:
        raise ToolError(f"cannot list {shown}: {e.strerror or e}") from None

    def is_dir(e: os.DirEntry[str]) -> bool:
        try:
            return e.is_dir()
        except OSError:
            return False

    entries.sort(key=lambda e: (not is_dir(e), e.name.lower(), e.name))
    lines = []
    for entry in entries[:MAX_ENTRIES]:
        name = entry.name + ("/" if is_dir(entry) else "")
        if entry.is_symlink():
            with contextlib.suppress(OSError):
                name += f" -> {os.readlink(entry.path)}"
        lines.append(name)
    if not entries:
        return f"{shown}/ is empty"
    header = f"{shown}/ ({len(entries)} {'entry' if len(entries) == 1 else 'entries'})"
    if len(entries) > MAX_ENTRIES:
        lines.append(f"… and {len(entries) - MAX_ENTRIES} more entries not shown")
    return header + "\n" + "\n".join(lines)

"""edit_file: replace one exact, unique piece of a text file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.file_access import FileAccess, routes
from picobot_tui.core.tools.paths import FILE_PATH_PARAM, display_path, resolve_in_workspace
from picobot_tui.core.tools.text import encode_utf8, unified_diff


class EditFileTool(Tool):
    name = "edit_file"
    description = (
        "Replace `old_text` with `new_text` in a file. `old_text` must match the file exactly "
        "(whitespace and indentation included) and exactly once; add surrounding lines to "
        "make it unique. Read the file first."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": FILE_PATH_PARAM,
            "old_text": {
                "type": "string",
                "minLength": 1,
                "description": "The exact text to replace; it must occur exactly once.",
            },
            "new_text": {"type": "string", "description": "The replacement text."},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }
    mutating = True

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        shown = display_path(path, ctx)
        old, new, _ = _plan(path, shown, args["old_text"], args["new_text"])
        return unified_diff(old, new, shown)

    async def preview_async(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        files, _ = await routes(path, ctx)
        if files is None:
            return self.preview(args, ctx)
        shown = display_path(path, ctx)
        old, new, _ = await _plan_via(files, path, shown, args["old_text"], args["new_text"])
        return unified_diff(old, new, shown)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        shown = display_path(path, ctx)
        old_text, new_text = args["old_text"], args["new_text"]
        read, write = await routes(path, ctx)
        if read is None and write is None:
            return await asyncio.to_thread(_apply, path, shown, old_text, new_text)
        # An editor reads and/or writes: each side goes where it is offered, the disk else.
        if read is not None:
            _, new, line = await _plan_via(read, path, shown, old_text, new_text)
        else:
            _, new, line = await asyncio.to_thread(_plan, path, shown, old_text, new_text)
        data = encode_utf8(new, "new_text")
        if write is not None:
            await write.write_text(path, new)
        else:
            await asyncio.to_thread(_write, path, shown, data)
        return _edited(shown, old_text, new_text, line)


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence."""
    found, i = [], text.find(needle)
    while i != -1:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


def _plan(path: Path, shown: str, old_text: str, new_text: str) -> tuple[str, str, int]:
    """(current text, edited text, line of the edit), or ToolError saying what is wrong."""
    _check_change(old_text, new_text)
    return _replace(_load(path, shown), shown, old_text, new_text)


async def _plan_via(
    files: FileAccess, path: Path, shown: str, old_text: str, new_text: str
) -> tuple[str, str, int]:
    """`_plan` on the text `files` gives (an editor's buffer); the file is still judged on
    disk first (missing, not regular, not UTF-8: the same errors)."""
    _check_change(old_text, new_text)
    await asyncio.to_thread(_load, path, shown)
    return _replace(await files.read_text(path), shown, old_text, new_text)


def _check_change(old_text: str, new_text: str) -> None:
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; there is nothing to change")


def _load(path: Path, shown: str) -> str:
    """The file's text from disk, or ToolError when it is missing, not regular or not UTF-8."""
    if not path.exists():
        raise ToolError(f"file not found: {shown}; use write_file to create it")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text; edit_file only edits text") from None
    except OSError as e:
        raise ToolError(f"cannot read {shown}: {e.strerror or e}") from None
    return text


def _replace(text: str, shown: str, old_text: str, new_text: str) -> tuple[str, str, int]:
    """(text, edited text, line of the edit) for one exact, unique match."""
    hits = _occurrences(text, old_text)
    if not hits and "\r\n" in text and "\n" in old_text and "\r\n" not in old_text:
        # The model saw LF line endings; the file has CRLF. Match it the file's way.
        old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
        hits = _occurrences(text, old_text)
    if not hits:
        raise ToolError(
            f"old_text was not found in {shown} (0 matches). It must match the file exactly, "
            "including whitespace and indentation; read the file again and copy the text."
        )
    lines = [text.count("\n", 0, i) + 1 for i in hits]
    if len(hits) > 1:
        where = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 else "")
        raise ToolError(
            f"old_text matches {len(hits)} times in {shown} (at lines {where}); it must match "
            "exactly once. Include more surrounding lines to make it unique."
        )
    i = hits[0]
    return text, text[:i] + new_text + text[i + len(old_text) :], lines[0]


def _apply(path: Path, shown: str, old_text: str, new_text: str) -> str:
    _, new, line = _plan(path, shown, old_text, new_text)
    _write(path, shown, encode_utf8(new, "new_text"))
    return _edited(shown, old_text, new_text, line)


def _write(path: Path, shown: str, data: bytes) -> None:
    try:
        atomic_write(path, data)
    except OSError as e:
        raise ToolError(f"cannot write {shown}: {e.strerror or e}") from None


def _edited(shown: str, old_text: str, new_text: str, line: int) -> str:
    removed = old_text.count("\n") + 1
    added = new_text.count("\n") + 1 if new_text else 0
    return f"edited {shown} at line {line}: replaced {removed} line(s) with {added} line(s)"

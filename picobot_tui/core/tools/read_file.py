"""read_file: a text file's lines, a window at a time for big files."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError
from picobot_tui.core.tools.file_access import routes
from picobot_tui.core.tools.paths import FILE_PATH_PARAM, display_path, resolve_in_workspace

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192


class ReadFileTool(Tool):
    name = "read_file"
    description = (
        "Read a UTF-8 text file in the workspace. Returns its lines as they are (no line "
        "numbers). Big files come a window at a time: the result then ends with a note giving "
        "the `offset` to read the next lines. Binary files are refused."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": FILE_PATH_PARAM,
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based line number to start at (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10000,
                "description": f"Most lines to return (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = resolve_in_workspace(args["path"], ctx)
        offset = int(args.get("offset", 1))
        limit = int(args.get("limit", DEFAULT_LIMIT))
        # Stay inside the result cap so the "read more" offset we give is the right one.
        budget = max(200, ctx.config.tool_result_max_chars - 200)
        shown = display_path(path, ctx)
        files, _ = await routes(path, ctx)
        if files is None:
            return await asyncio.to_thread(
                _read_window, path, shown, offset, limit, budget, ctx.scrub
            )
        # Through the editor: the same checks on disk first (a directory, a device or a
        # binary file never reaches it), then its text, windowed the same way.
        await asyncio.to_thread(_check_text_file, path, shown)
        text = await files.read_text(path)
        return _text_window(text, shown, offset, limit, budget, ctx.scrub)


def _read_window(
    path: Path,
    shown: str,
    offset: int,
    limit: int,
    budget: int,
    scrub: Callable[[str], str] | None = None,
) -> str:
    with _open_text_file(path, shown) as f:
        return _window(f, shown, offset, limit, budget, scrub)


def _open_text_file(path: Path, shown: str) -> io.BufferedReader:
    """The file opened for reading, at its start; ToolError when it is missing, not a
    regular file, unreadable or binary (a NUL byte in its first 8 KiB)."""
    if not path.exists():
        raise ToolError(f"file not found: {shown}")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; use list_dir to see what it holds")
    if not path.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, FIFO or socket)")
    try:
        f = path.open("rb")
    except OSError as e:
        raise ToolError(f"cannot read {shown}: {e.strerror or e}") from None
    try:
        _refuse_binary(f.read(_SNIFF_BYTES), shown, lambda: path.stat().st_size)
        f.seek(0)
    except BaseException:
        f.close()
        raise
    return f


def _check_text_file(path: Path, shown: str) -> None:
    _open_text_file(path, shown).close()


def _refuse_binary(sniff: bytes, shown: str, size: Callable[[], int]) -> None:
    if b"\x00" in sniff:
        raise ToolError(
            f"{shown} is a binary file ({size()} bytes); read_file only reads text. "
            "Use exec with a tool like `file`, `xxd | head` or a script to inspect it."
        )


def _text_window(
    text: str,
    shown: str,
    offset: int,
    limit: int,
    budget: int,
    scrub: Callable[[str], str] | None = None,
) -> str:
    """`_read_window` over a text already read (an editor's buffer)."""
    # Lone surrogates (JSON allows them) become invalid bytes, shown as \ufffd with the note.
    data = text.encode("utf-8", errors="surrogatepass")
    _refuse_binary(data[:_SNIFF_BYTES], shown, lambda: len(data))
    return _window(io.BytesIO(data), shown, offset, limit, budget, scrub)


def _window(
    f: Iterable[bytes],
    shown: str,
    offset: int,
    limit: int,
    budget: int,
    scrub: Callable[[str], str] | None = None,
) -> str:
    """The lines `offset`.. of `f` that fit `limit` and `budget`, with the notes."""
    out: list[str] = []
    used = 0
    total = 0
    last = 0
    undecodable = False
    full = True  # every requested line fitted
    for total, raw in enumerate(f, 1):
        if total < offset or not full:
            continue
        if len(out) >= limit:
            full = False
            continue
        line = raw.decode("utf-8", errors="replace")
        if "\ufffd" in line and b"\xef\xbf\xbd" not in raw:
            undecodable = True
        if scrub is not None:  # mask before the long-line cut: no key kept in pieces
            line = scrub(line)
        body = line.rstrip("\r\n")
        if len(body) > MAX_LINE_CHARS:
            line = f"{body[:MAX_LINE_CHARS]}… [line {total} cut: {len(body)} chars]\n"
        if out and used + len(line) > budget:
            full = False
            continue
        out.append(line)
        used += len(line)
        last = total
    if total == 0:
        return f"({shown} is empty)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown} ({total} lines)")
    text = "".join(out).rstrip("\n")
    notes = []
    if undecodable:
        notes.append("the file is not valid UTF-8; undecodable bytes are shown as \ufffd")
    if offset > 1 or last < total:
        more = f"; use offset={last + 1} to read more" if last < total else ""
        notes.append(f"showing lines {offset}-{last} of {total}{more}")
    if notes:
        text += "\n\n[" + "; ".join(notes) + "]"
    return text

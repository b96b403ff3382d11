"""Where the file tools read and write text: the disk, or a front end's editor.

A front end that runs inside an editor (ACP) sets `ToolContext.files` so read_file, write_file
and edit_file see the editor's unsaved buffers and their changes land in the editor (its undo
covers them). Everything else about those tools stays theirs: the path is confined by its
resolved real path first, directories, devices, binary and non-UTF-8 files are judged on disk
as before (and such files never go through a FileAccess: it carries text only), results are
windowed, scrubbed and capped the same way, approval previews diff the text the change will
apply to. `ToolContext.files = None` (the default) is the disk, exactly as without this module.

A FileAccess says per operation whether it takes it (`reads`, `writes`): an editor may offer
one and not the other, and the tools use the disk for the operation it does not take. A file
bigger than MAX_ACCESS_BYTES on disk is read and written on disk only: a FileAccess moves
whole texts (one protocol message each), and read_file streams big files a window at a time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

MAX_ACCESS_BYTES = 8 * 1024 * 1024
"""Files bigger than this on disk never go through a FileAccess (the disk instead)."""


class FileAccess(Protocol):
    """Text files through someone else's hands. Paths are absolute, resolved and already
    confined to the workspace. A failure raises ToolError (its message is what the model sees)
    or OSError."""

    @property
    def reads(self) -> bool:
        """Whether `read_text` is offered: else the tools read the disk."""
        ...

    @property
    def writes(self) -> bool:
        """Whether `write_text` is offered: else the tools write the disk (atomically)."""
        ...

    async def read_text(self, path: Path) -> str:
        """The file's current text (an open editor buffer, saved or not)."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Replace the file's whole text (creating the file when it does not exist)."""
        ...


class HasFiles(Protocol):
    """What the routing needs of a ToolContext (named structurally: base.py imports this
    module, so importing it back would make a cycle)."""

    @property
    def files(self) -> FileAccess | None: ...


def reader(ctx: HasFiles) -> FileAccess | None:
    """The FileAccess reads go through, or None for the disk."""
    files = ctx.files
    return files if files is not None and files.reads else None


def writer(ctx: HasFiles) -> FileAccess | None:
    """The FileAccess writes go through, or None for the disk."""
    files = ctx.files
    return files if files is not None and files.writes else None


def too_big(path: Path) -> bool:
    """Whether the file on disk is bigger than MAX_ACCESS_BYTES. Blocking."""
    try:
        return path.stat().st_size > MAX_ACCESS_BYTES
    except OSError:
        return False


async def routes(path: Path, ctx: HasFiles) -> tuple[FileAccess | None, FileAccess | None]:
    """(reader, writer) for this file: `reader(ctx)` and `writer(ctx)`, both None (the disk)
    when the file on disk is too big for a FileAccess."""
    read, write = reader(ctx), writer(ctx)
    if (read is not None or write is not None) and await asyncio.to_thread(too_big, path):
        return None, None
    return read, write


def disk_text(path: Path) -> str | None:
    """The file's text when it is a regular UTF-8 file on disk, else None (absent, a
    directory, a device, binary or undecodable). Blocking: call it in a thread."""
    try:
        if not path.is_file():
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


async def current_text(path: Path, ctx: HasFiles) -> str | None:
    """The text a change to `path` applies to: the FileAccess's (an editor buffer) when it
    reads, else the disk's; None when `path` is not a UTF-8 text file on disk (absent,
    binary, a directory). A front end uses it for a diff's old text; the previews use it.
    `path` must come from `resolve_in_workspace`."""
    text = await asyncio.to_thread(disk_text, path)
    files, _ = await routes(path, ctx)
    if text is None or files is None:
        return text
    return await files.read_text(path)

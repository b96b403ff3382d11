"""The file tools through the ACP client: `fs/read_text_file` and `fs/write_text_file`.

When the client advertises `fs.readTextFile` / `fs.writeTextFile` in `initialize`, a session's
read_file, write_file and edit_file read and write through it, so the editor's unsaved
buffers are what the model reads and edits, and its undo covers each change. A method the
client did not advertise is never called.

Each capability counts on its own: the client is used for what it advertises, the disk for the
rest. A client that reads but does not write gets the edit of its buffer's text written to
disk (the editor then sees the file change under the buffer, as with any other program); one
that writes but does not read gets edits planned on the disk's text and written into the
buffer (its undo can take them back). Refusing to write at all would be the only other choice,
and the disk is what picobot does everywhere else.

Everything else stays the core's (core/tools/file_access.py): paths are confined by their
resolved real path before the client is asked, directories, devices, binary and non-UTF-8 files
are judged on disk and never sent, and results are windowed, scrubbed and capped as read_file
does. The path sent is that resolved, absolute path (the protocol wants absolute paths).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.core.tools.base import ToolError

if TYPE_CHECKING:
    from acp import schema as s

    from picobot_tui.core.tools.base import ToolContext

log = logging.getLogger("picobot.acp")

MAX_ERROR_CHARS = 300


class ClientFiles:
    """A FileAccess (core/tools/file_access.py) over one ACP session's client connection.

    `client` is the agent side's connection to the client (acp's AgentSideConnection, or
    anything with its `read_text_file` / `write_text_file`)."""

    def __init__(self, client: Any, session_id: str, *, reads: bool, writes: bool) -> None:
        self._client = client
        self._session_id = session_id
        self._reads = reads
        self._writes = writes

    @property
    def reads(self) -> bool:
        return self._reads

    @property
    def writes(self) -> bool:
        return self._writes

    def __repr__(self) -> str:
        return (
            f"ClientFiles(session={self._session_id!r}, reads={self._reads}, writes={self._writes})"
        )

    async def read_text(self, path: Path) -> str:
        if not self._reads:  # the tools ask only when `reads`; never call what is not offered
            raise ToolError("the client does not offer fs/read_text_file")
        try:
            response = await self._client.read_text_file(
                session_id=self._session_id, path=str(path)
            )
        except Exception as e:
            raise _failed("read", path, e) from None
        content = getattr(response, "content", None)
        if not isinstance(content, str):
            raise ToolError(f"the editor gave no text for {path}")
        return content

    async def write_text(self, path: Path, text: str) -> None:
        if not self._writes:
            raise ToolError("the client does not offer fs/write_text_file")
        try:
            await self._client.write_text_file(
                session_id=self._session_id, path=str(path), content=text
            )
        except Exception as e:
            raise _failed("write", path, e) from None


def _failed(verb: str, path: Path, e: Exception) -> ToolError:
    """The tool error the model reads when the client refused or could not answer."""
    from acp.exceptions import RequestError

    if isinstance(e, RequestError):
        why = str(e) or "an error"
        data = e.data
        if isinstance(data, str) and data:
            why += f": {data}"
        elif isinstance(data, dict):
            detail = data.get("details") or data.get("message")
            if isinstance(detail, str) and detail:
                why += f": {detail}"
        if len(why) > MAX_ERROR_CHARS:
            why = why[: MAX_ERROR_CHARS - 1] + "…"
        log.info("fs/%s_text_file %s refused by the client: %s", verb, path, why)
        return ToolError(f"the editor could not {verb} {path}: {why}")
    log.warning("fs/%s_text_file %s failed: %s: %s", verb, path, type(e).__name__, e)
    return ToolError(f"the editor did not answer a {verb} of {path} ({type(e).__name__})")


def client_files(
    client: Any, session_id: str, capabilities: s.ClientCapabilities | None
) -> ClientFiles | None:
    """A ClientFiles for what the client advertised, or None when it offers neither method
    (the tools then use the disk, and the client's fs methods are never called)."""
    fs = capabilities.fs if capabilities is not None else None
    reads = bool(fs is not None and fs.read_text_file)
    writes = bool(fs is not None and fs.write_text_file)
    if not (reads or writes):
        return None
    return ClientFiles(client, session_id, reads=reads, writes=writes)


def attach(
    ctx: ToolContext, client: Any, session_id: str, capabilities: s.ClientCapabilities | None
) -> ClientFiles | None:
    """Point a session's file tools at the client (`ctx.files`), for what it advertised;
    without fs capabilities `ctx.files` is None: the disk. Returns what was attached."""
    files = client_files(client, session_id, capabilities)
    ctx.files = files
    log.info("session %s file tools: %s", session_id, files if files is not None else "the disk")
    return files

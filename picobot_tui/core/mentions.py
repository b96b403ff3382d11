"""`@path` mentions in a user's message: each is attached when the message is sent.

`@src/app.py` attaches the file as `read_file` returns it (capped, scrubbed, binary
refused, an editor's buffer under ACP), `@src/` the folder as `list_dir` lists it; the
registry runs the tools, so confinement and caps are theirs. A mention is a path relative
to the workspace (no `~`, `$` or leading `/`) after a space or at the start, that resolves
inside the workspace and exists; anything else (`@alice`, an e-mail address) is text. An
image is not attached yet (it says so): images are issue 26's point 4. Shared by every front
end: the loop prepares each message (core/user_message.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picobot_tui.core.tools.registry import ToolRegistry

_MENTION = re.compile(r"(?<![\w@/])@([\w.\-/]+[\w/])")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
MAX_MENTIONS = 20
"""More than this many are left as text (a pasted log full of @s is not a request)."""


def mentioned(text: str, workspace: Path) -> list[str]:
    """The distinct `@path`s of `text` that name something inside `workspace`, in order."""
    root = workspace.expanduser().resolve()
    out: list[str] = []
    for match in _MENTION.finditer(text):
        rel = match.group(1)
        if rel in out or rel.startswith(("/", "~", "$")) or ".." in Path(rel).parts:
            continue
        path = root / rel
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real.is_relative_to(root) and os.path.lexists(path):
            out.append(rel)
        if len(out) == MAX_MENTIONS:
            break
    return out


async def attach(text: str, tools: ToolRegistry | None) -> str:
    """`text` with each mention's file or folder appended under a header of its own."""
    if tools is None or "@" not in text:
        return text
    parts = [text]
    for rel in mentioned(text, tools.ctx.workspace):
        path = tools.ctx.workspace / rel
        if path.suffix.lower() in IMAGE_SUFFIXES:
            parts.append(f"[@{rel}: an image; picobot does not attach images yet]")
            continue
        name = "list_dir" if path.is_dir() else "read_file"
        if tools.get(name) is None:
            continue
        result = await tools.execute(name, {"path": rel})
        if result.ok:
            parts.append(f"[attached: {rel}]\n{result.content}")
        else:
            parts.append(f"[@{rel} not attached: {result.content}]")
    return "\n\n".join(parts)

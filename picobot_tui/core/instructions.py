"""The project's instruction files, found as the repository lays them out.

From the repository root (the nearest folder at or above the workspace holding `.git`, a
folder or a worktree's file; else the workspace itself) down to the workspace, each folder's
instructions go into the system prompt, outermost first: its `AGENTS.md`, or, in a folder
that has none, its `CLAUDE.md` (for projects written for Claude Code only). Never both: a
folder with both means the same thing twice.

A folder below the workspace with its own file (a package of a monorepo) is not in the
prompt: its instructions join the result of the first file tool call that reads, lists or
changes something under it, once per session (`Nested`), so the prompt's cached prefix is
the same before and after.

Every file is read through a `ConfinedReader` rooted at the repository root: by resolved
path, regular files only, scrubbed and capped. The caller reads none of them for an
untrusted workspace.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from picobot_tui.core.context_files import ConfinedReader

NAMES = ("AGENTS.md", "CLAUDE.md")
"""Instruction file names in the order of preference (the first one a folder has wins)."""
log = logging.getLogger("picobot.context")

MAX_CHARS = 8_000
"""Per file, as the other templates (core/context.py TEMPLATE_MAX_CHARS)."""
MARK = "[instructions for the files under {where}, from {path}]"
"""The header a nested file gets in a tool result; also how a resumed session knows it."""


def repo_root(workspace: Path) -> Path:
    """The nearest folder at or above `workspace` holding `.git`; else `workspace`."""
    ws = workspace.expanduser().resolve()
    for folder in (ws, *ws.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return ws


def folders_down(root: Path, workspace: Path) -> list[Path]:
    """`root`, then each folder below it down to `workspace` (which must be under it)."""
    ws = workspace.expanduser().resolve()
    out = [root]
    for part in ws.relative_to(root).parts:
        out.append(out[-1] / part)
    return out


class Found(NamedTuple):
    path: Path
    text: str
    size: int


def pick(reader: ConfinedReader, folder: Path) -> Found | None:
    """The folder's instruction file, its text and size (the first of `NAMES` that may be
    read), or None."""
    for name in NAMES:
        path = folder / name
        read = reader.read(path, MAX_CHARS)
        if read is not None:
            return Found(path, read[0], read[1])
    return None


@dataclass
class Nested:
    """Instruction files below the workspace, handed to the model with the first tool result
    that touches their folder; one per session."""

    workspace: Path
    reader: ConfinedReader
    seen: set[str] = field(default_factory=set)
    """Workspace-relative paths already handed over (or known from the history)."""
    logged: set[str] = field(default_factory=set)
    """Files left out (a link out of the workspace, a FIFO) that the log has told of."""

    def learn(self, history: list[dict[str, object]]) -> None:
        """Mark what a resumed session's tool results already carry."""
        for msg in history:
            content = msg.get("content")
            if (
                msg.get("role") == "tool"
                and isinstance(content, str)
                and "[instructions" in content
            ):
                for line in content.splitlines():
                    if line.startswith("[instructions for the files under ") and ", from " in line:
                        self.seen.add(line.rsplit(", from ", 1)[1].rstrip("]"))

    def for_path(self, target: Path, *, is_dir: bool = False) -> str:
        """What to append to the result of a call on `target`: each not-yet-seen instruction
        file in the folders from the workspace (exclusive) down to `target`'s folder, or
        `target` itself when it is a folder; outermost first. "" when there is none."""
        ws = self.workspace.expanduser().resolve()
        try:
            real = target.expanduser().resolve()
            rel = real.relative_to(ws)
        except (OSError, RuntimeError, ValueError):
            return ""
        parts = rel.parts if is_dir else rel.parts[:-1]
        out: list[str] = []
        folder = ws
        for part in parts:
            folder = folder / part
            found = pick(self.reader, folder)
            if found is None:
                continue
            path, text, _ = found
            name = str(path.relative_to(ws))
            if name in self.seen:
                continue
            self.seen.add(name)
            where = str(folder.relative_to(ws)) + "/"
            out.append(MARK.format(where=where, path=name) + "\n" + text.strip())
        for skipped, why in self.reader.skipped.items():
            if skipped not in self.logged:
                self.logged.add(skipped)
                log.warning("%s left out of a tool result's instructions: it %s", skipped, why)
        return "\n\n".join(out)

"""Workspace confinement for file paths.

The check compares *resolved real paths* (`Path.resolve` follows every symlink, collapses
`..`), never string prefixes: `/ws2` is not inside `/ws`, and `ws/link -> /etc` is outside.
It is a check made just before the file is opened; a process racing to swap a directory for a
symlink in between is not guarded against, and neither are hard links made from outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from picobot_tui.core.tools.base import ToolContext, ToolError


def workspace_root(ctx: ToolContext) -> Path:
    """The workspace as a resolved real path."""
    return Path(ctx.workspace).expanduser().resolve()


def resolve_in_workspace(path: str, ctx: ToolContext) -> Path:
    """Turn a model-supplied path into a resolved real path, refusing escapes.

    `~` and environment variables (`$HOME`, `${X}`) are expanded first; a relative path is
    taken from the workspace. With `restrict_to_workspace` on, the resolved path must be the
    workspace or inside it, else ToolError.
    """
    if not isinstance(path, str):
        raise ToolError(f"path must be a string, got {type(path).__name__}")
    if not path:
        raise ToolError("path is empty")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    workspace = workspace_root(ctx)
    candidate = Path(os.path.expandvars(os.path.expanduser(path)))
    if not candidate.is_absolute():
        candidate = workspace / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as e:  # symlink loops: RuntimeError before 3.13
        raise ToolError(f"cannot resolve path {path!r}: {e}") from None
    if ctx.config.restrict_to_workspace and not resolved.is_relative_to(workspace):
        shown = repr(path) if str(resolved) == path else f"{path!r} (resolves to {resolved})"
        raise ToolError(
            f"path {shown} is outside the workspace {workspace}; restrictToWorkspace is on"
        )
    return resolved


def display_path(path: Path, ctx: ToolContext) -> str:
    """A short form for messages: relative to the workspace when inside it."""
    workspace = workspace_root(ctx)
    if path == workspace:
        return "."
    if path.is_relative_to(workspace):
        return str(path.relative_to(workspace))
    return str(path)


FILE_PATH_PARAM: dict[str, object] = {
    "type": "string",
    "minLength": 1,
    "description": "File path, relative to the workspace (or absolute inside it).",
}
"""The JSON schema of a file tool's `path` argument."""

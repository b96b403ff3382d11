"""The one seam between the tool step and checkpoints: `run_checkpointed`.

`core/tool_step.py` calls it instead of `ToolRegistry.execute` when checkpoints are on. By
tool:

- `write_file`, `edit_file`, `todo` (a change, not `read`): the file's prior state is read
  through the path the tool writes through (the disk, or `ToolContext.files`, an editor's
  buffer, when it reads), the tool runs, the new state is read the same way, and a record is
  kept when the file changed;
- `exec`: a shadow-git snapshot before and after (each within the exec timeout), the files
  that differ recorded; a workspace that cannot be snapshotted is recorded "not
  checkpointed" and a notice says so, once per reason per process; nested git repositories
  the command changed are recorded "not checkpointed" by path, and changes to files over
  `maxFileBytes` "not undoable", each said in a notice for that call;
- anything else (read_file, web_fetch, MCP tools) runs as it is.

`not_undoable(settings, tools, name, args)` is the line an approval preview adds when the
change would not be undoable (a file over `checkpoints.maxFileBytes`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.core.checkpoints.recorder import Recorder, recorder_for
from picobot_tui.core.checkpoints.records import FileState, state_of_bytes
from picobot_tui.core.checkpoints.shadow_git import NotCheckpointed
from picobot_tui.core.tools.base import ToolError, ToolResult
from picobot_tui.core.tools.file_access import current_text, reader
from picobot_tui.core.tools.paths import resolve_in_workspace, workspace_root
from picobot_tui.core.visible import label

if TYPE_CHECKING:
    from picobot_tui.core.settings import CoreSettings
    from picobot_tui.core.tools.base import ToolContext
    from picobot_tui.core.tools.registry import ToolRegistry

log = logging.getLogger("picobot.checkpoints")

FILE_TOOLS = ("write_file", "edit_file", "todo")
NESTED = "a nested git repository"


def _paths(name: str, args: dict[str, Any], ctx: ToolContext) -> list[Path]:
    """The files a file tool may change (none when the call cannot change one)."""
    try:
        if name in ("write_file", "edit_file"):
            return [resolve_in_workspace(args["path"], ctx)]
        if name == "todo" and args.get("action") != "read":
            from picobot_tui.core.tools.todo import todo_path

            return [todo_path(ctx)]
    except (ToolError, KeyError, TypeError):
        pass  # the tool refuses it the same way: nothing will change
    return []


async def _states(
    recorder: Recorder, paths: list[Path], ctx: ToolContext, name: str
) -> dict[Path, FileState]:
    states = await asyncio.to_thread(recorder.capture, paths)
    # The todo tool writes the disk; the file tools go through an editor's buffers only for
    # UTF-8 text under the size limit (file_access.routes): read what the tool acts on.
    if reader(ctx) is None or name == "todo":
        return states
    for path, state in states.items():
        if state.kind != "file":
            continue
        try:
            text = await current_text(path, ctx)
        except (OSError, ToolError, UnicodeError):
            continue
        if text is None:  # binary, or not there: the disk's state is the tool's
            continue
        states[path] = await asyncio.to_thread(
            state_of_bytes,
            text.encode("utf-8", "surrogatepass"),
            state.mode or 0o644,
            recorder.config.max_file_bytes,
            recorder.store,
        )
    return states


async def run_checkpointed(
    tools: ToolRegistry,
    name: str,
    args: dict[str, Any],
    *,
    settings: CoreSettings,
    session: str | None,
    turn: int,
    call_id: str,
) -> tuple[ToolResult, str | None]:
    """Run the call through `tools.execute`, checkpointing what it changes. Returns the
    result and a notice to show the user (None when there is nothing to say). Checkpoint
    failures are logged, never the call's failure."""
    recorder = recorder_for(settings) if session else None
    if recorder is None or session is None:
        return await tools.execute(name, args), None
    ctx = tools.ctx
    if name in FILE_TOOLS:
        paths = _paths(name, args, ctx)
        if not paths:
            return await tools.execute(name, args), None
        workspace = workspace_root(ctx)
        try:
            before = await _states(recorder, paths, ctx, name)
        except OSError as e:
            log.warning("checkpoint of %s before %s failed: %s", paths, call_id, e)
            return await tools.execute(name, args), None
        result = await tools.execute(name, args)
        try:
            after = await _states(recorder, paths, ctx, name)
            await asyncio.to_thread(
                recorder.commit,
                session,
                turn,
                call_id,
                name,
                workspace,
                before,
                after,
                result.ok,
            )
        except OSError as e:
            log.warning("checkpoint of %s after %s failed: %s", paths, call_id, e)
        return result, None
    if name != "exec":
        return await tools.execute(name, args), None
    workspace = workspace_root(ctx)
    budget = _exec_timeout(args, ctx)
    try:
        old = await asyncio.to_thread(recorder.snapshot, workspace, session, budget)
    except (NotCheckpointed, OSError) as e:
        result = await tools.execute(name, args)
        return result, _skipped(recorder, session, turn, call_id, str(e))
    result = await tools.execute(name, args)
    try:
        new = await asyncio.to_thread(recorder.snapshot, workspace, session, budget)
        changes, nested = await asyncio.to_thread(
            recorder.exec_changes, session, turn, call_id, name, workspace, old, new
        )
    except (NotCheckpointed, OSError) as e:
        return result, _skipped(recorder, session, turn, call_id, str(e))
    notes = []
    if nested:
        try:
            recorder.not_checkpointed(session, turn, call_id, name, NESTED, nested)
        except OSError as e:
            log.warning("could not record %s: %s", call_id, e)
        names = ", ".join(label(p, exact=True) for p in nested)
        notes.append(
            f"Not checkpointed: {names} ({NESTED}, whose files picobot does not snapshot): "
            "rewind cannot undo what this command changed there."
        )
    for change in changes:
        if not change.undoable:
            notes.append(
                f"Not undoable: {change.shown} ({change.before.reason}): its change is not kept."
            )
    return result, "\n".join(notes) or None


def _exec_timeout(args: dict[str, Any], ctx: ToolContext) -> float:
    """The call's exec timeout: each snapshot around it gets as long, no longer."""
    try:
        value = float(args.get("timeout") or ctx.config.exec.timeout)
    except (TypeError, ValueError):
        value = float(ctx.config.exec.timeout)
    return max(value, 1.0)


def _skipped(recorder: Recorder, session: str, turn: int, call: str, reason: str) -> str | None:
    log.warning("exec %s not checkpointed: %s", call, reason)
    try:
        recorder.not_checkpointed(session, turn, call, "exec", reason)
    except OSError as e:
        log.warning("could not record it: %s", e)
    if recorder.tell(reason):
        return f"Not checkpointed: {reason}. Rewind cannot undo what these commands change."
    return None


def not_undoable(
    settings: CoreSettings, tools: ToolRegistry, name: str, args: dict[str, Any]
) -> str | None:
    """A line for the approval preview when this change could not be undone: the file is
    over checkpoints.maxFileBytes. None otherwise (or when checkpoints are off)."""
    config = settings.checkpoints
    if not config.enabled or name not in FILE_TOOLS:
        return None
    for path in _paths(name, args, tools.ctx):
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if size > config.max_file_bytes:
            return (
                f"not undoable: {path.name} is {size:,} bytes, over checkpoints.maxFileBytes "
                f"({config.max_file_bytes:,}), so no checkpoint is kept"
            )
    return None

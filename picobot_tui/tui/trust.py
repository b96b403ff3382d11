"""Whether the TUI may trust its workspace: a named one always, the current directory only
when the user says so (asked once per folder, the answer kept in trusted.json).

Imported after the first frame. `settle` waits for the user's answer, so it runs in a worker
(the app starts in one while a question is pending): the app's message pump must stay free
to deliver the modal's keys.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual.app import App

from picobot_tui.config.trust import remember_trust, trust_answer, trust_path
from picobot_tui.core.paths import shown
from picobot_tui.run.options import RunOptions
from picobot_tui.run.workspace import check_workspace
from picobot_tui.tui.view_events import NoticeShown
from picobot_tui.widgets.trust_dialog import TrustScreen

if TYPE_CHECKING:
    from picobot_tui.core.settings import CoreSettings
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.tui.view_events import ViewEvent


def implicit(settings: CoreSettings, options: RunOptions) -> bool:
    """The workspace is the current directory: neither --workspace nor the config names one."""
    return options.workspace is None and not settings.workspace_explicit


def pending(settings: CoreSettings, options: RunOptions) -> bool:
    """The user will be asked (an implicit workspace never answered for)."""
    return implicit(settings, options) and trust_answer(settings.workspace_path) is None


async def settle(app: App[Any], settings: CoreSettings, options: RunOptions) -> bool:
    """True when the workspace is trusted: named, answered yes before, or answered yes now.
    RunError when the workspace cannot be used at all (checked before anyone is asked)."""
    if not implicit(settings, options):
        return True
    ws = check_workspace(settings)
    answer = trust_answer(ws)
    if answer is not None:
        return answer
    future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def done(result: bool | None) -> None:
        if not future.done():
            future.set_result(bool(result))

    app.push_screen(TrustScreen(ws), done)
    answer = await future
    try:
        remember_trust(ws, answer)
    except OSError as e:
        app.notify(f"Could not save the answer: {e}", severity="error", markup=False)
    return answer


def untrusted_notice(runtime: Runtime) -> ViewEvent:
    """What the transcript says when the tools are read-only for an untrusted workspace."""
    servers = " and no MCP server is started" if runtime.mcp is not None else ""
    return NoticeShown(
        "warning",
        f"{shown(runtime.tools.ctx.workspace)} is not trusted: its AGENTS.md, skills, commands, "
        f"kb/ and TODO.md are not loaded, the tools are read-only{servers}. To change that, remove "
        f"it from {shown(trust_path())}, or start with --workspace.",
    )

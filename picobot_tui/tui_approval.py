"""The loop's `confirm` in the TUI: an approval modal resolved through a future.

"Always allow" is a front-end decision: the tool is added to `tools.alwaysAllow` (in memory
and in config.json) and the loop is told "allow_session".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from picobot_tui.widgets.approval import ApprovalScreen

if TYPE_CHECKING:
    from picobot_tui.app import PicobotApp
    from picobot_tui.core.loop import ApprovalRequest


async def ask(app: PicobotApp, request: ApprovalRequest) -> str:
    """Show the modal and wait for the answer. If the turn is cancelled meanwhile (Esc),
    the modal is closed and the cancellation goes on to the loop."""
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def done(result: str | None) -> None:
        if not future.done():
            future.set_result(result or "deny")

    screen = ApprovalScreen(request.id, request.name, request.arguments, request.preview)
    app.push_screen(screen, done)
    try:
        decision = await future
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            screen.dismiss(None)
        raise
    if decision == "always":
        always_allow(app, request.name)
        decision = "allow_session"
    app.router.state = "running tool" if decision != "deny" else "thinking"
    return decision


def always_allow(app: PicobotApp, tool: str) -> None:
    from picobot_tui.tui_config import persist_always_allow

    if tool not in app.settings.tools.always_allow:
        app.settings.tools.always_allow.append(tool)
    try:
        path = persist_always_allow(tool)
    except (OSError, ValueError) as e:
        app.notify(f"Could not save to config.json: {e}", severity="error")
    else:
        app.notify(f"{tool} is now always allowed (saved to {path})")

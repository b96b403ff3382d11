"""The loop's `confirm` in the TUI: an approval modal resolved through a future.

"Always allow" is a front-end decision: the tool is added to `tools.alwaysAllow` (for
web_fetch, the host to `tools.web.allowHosts`), in memory and in config.json, and the loop is
told "allow_session".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from picobot_tui.widgets.approval import ApprovalScreen

if TYPE_CHECKING:
    from picobot_tui.core.loop import ApprovalRequest
    from picobot_tui.tui.app import PicobotApp


async def ask(app: PicobotApp, request: ApprovalRequest) -> str:
    """Show the modal and wait for the answer. If the turn is cancelled meanwhile (Esc),
    the modal is closed and the cancellation goes on to the loop."""
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def done(result: str | None) -> None:
        if not future.done():
            future.set_result(result or "deny")

    screen = ApprovalScreen(
        request.id,
        request.name,
        request.arguments,
        request.preview,
        full=request.whole,
        hidden=request.hidden,
        host=request.host if request.scope == "host" else None,
    )
    app.push_screen(screen, done)
    try:
        decision = await future
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            screen.dismiss(None)
        raise
    if decision == "always":
        always_allow(app, request)
        decision = "allow_session"
    app.router.state = "running tool" if decision != "deny" else "thinking"
    return decision


def always_allow(app: PicobotApp, request: ApprovalRequest) -> None:
    from picobot_tui.config.remember import remember_always

    try:
        what, path = remember_always(app.settings, request)
    except (OSError, ValueError) as e:
        app.notify(f"Could not save to config.json: {e}", severity="error")
    else:
        app.notify(f"{what} is now always allowed (saved to {path})", markup=False)

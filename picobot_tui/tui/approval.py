"""The loop's `confirm` in the TUI: an approval modal resolved through a future.

"Always allow" is a front-end decision: the tool is added to `tools.alwaysAllow` (for
web_fetch, the host to `tools.web.allowHosts`), in memory and in config.json, and the loop is
told "allow_session".
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from textual.app import App

from picobot_tui.config.remember import remember_always
from picobot_tui.widgets.approval import ApprovalScreen

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.approval import ApprovalRequest, Decision


async def ask(app: App[Any], settings: Settings, request: ApprovalRequest) -> Decision:
    """Show the modal on `app` and wait for the answer. If the turn is cancelled meanwhile
    (Esc), the modal is closed and the cancellation goes on to the loop."""
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
        always_allow(app, settings, request)
        decision = "allow_session"
    # The screen's buttons only ever give one of the loop's decisions.
    return cast("Decision", decision)


def always_allow(app: App[Any], settings: Settings, request: ApprovalRequest) -> None:
    """Remember the tool (or host) in settings and config.json; tell the user either way."""
    try:
        what, path = remember_always(settings, request)
    except (OSError, ValueError) as e:
        app.notify(f"Could not save to config.json: {e}", severity="error")
    else:
        app.notify(f"{what} is now always allowed (saved to {path})", markup=False)

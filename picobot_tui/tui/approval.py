"""The loop's `confirm` in the TUI: an approval modal resolved through a future.

"Always allow" is a front-end decision: the tool (for exec, the offered rule: a command prefix
`exec(git status:*)` or the exact command; for web_fetch, the host) is saved for this
workspace (`a`, permissions.json) or everywhere (`e`, config.json), in memory and on disk,
and the loop is told "always". A deny may carry the user's reason (a `Denied`), which the
model reads as the tool result.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from textual.app import App

from picobot_tui.config.remember import remember_always
from picobot_tui.core.approval import Denied
from picobot_tui.widgets.approval import ApprovalScreen

if TYPE_CHECKING:
    from picobot_tui.config.remember import Scope
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.approval import ApprovalRequest, Decision
    from picobot_tui.core.tools.base import ToolContext


async def ask(
    app: App[Any], settings: Settings, ctx: ToolContext, request: ApprovalRequest
) -> Decision | Denied:
    """Show the modal on `app` and wait for the answer. If the turn is cancelled meanwhile
    (Esc), the modal is closed and the cancellation goes on to the loop."""
    future: asyncio.Future[str | Denied] = asyncio.get_running_loop().create_future()

    def done(result: str | Denied | None) -> None:
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
        prefix=request.prefix,
        rule=request.rule,
        note=request.note,
        workspace=str(ctx.workspace),
    )
    app.push_screen(screen, done)
    try:
        decision = await future
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            screen.dismiss(None)
        raise
    if isinstance(decision, Denied):
        return decision
    if decision in ("always", "always_everywhere"):
        always_allow(
            app, settings, ctx, request, "everywhere" if decision != "always" else "workspace"
        )
        return "always"
    # The screen's buttons only ever give one of the loop's decisions.
    return cast("Decision", decision)


def always_allow(
    app: App[Any], settings: Settings, ctx: ToolContext, request: ApprovalRequest, scope: Scope
) -> None:
    """Remember the tool, exec rule or host, for this workspace or everywhere; tell the user."""
    try:
        saved = remember_always(settings, ctx, request, scope)
    except (OSError, ValueError) as e:
        app.notify(f"Could not save the rule: {e}", severity="error", markup=False)
        return
    if saved is None:
        app.notify("Nothing saved: no rule could match this command; allowed once")
        return
    what, path = saved
    app.notify(f"{what} is now always allowed (saved to {path})", markup=False)

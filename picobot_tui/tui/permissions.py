"""`/permissions` (and the palette's Permissions): list the always-allow rules in effect, each
with its scope (this workspace: permissions.json; everywhere: config.json's
`tools.alwaysAllow` / `tools.web.allowHosts`), and remove them.

A removal takes effect at once (the run's rules) and in its file; a rule that the file does
not hold (set by an environment variable, say) is dropped for this run and the user is told
where it came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picobot_tui.config.remember import forget_rule, stored_rules
from picobot_tui.core.visible import visible
from picobot_tui.widgets.permissions import PermissionsScreen

if TYPE_CHECKING:
    from textual.app import App

    from picobot_tui.config.settings import Settings
    from picobot_tui.core.tools.base import ToolContext


def show(app: App[Any], settings: Settings, ctx: ToolContext, highlight: int = 0) -> None:
    """Open the list; a removal reopens it on the next rule."""
    rules = stored_rules(settings, ctx)

    def done(index: int | None) -> None:
        if index is None or not 0 <= index < len(rules):
            return
        rule = rules[index]
        try:
            path = forget_rule(settings, ctx, rule)
        except (OSError, ValueError) as e:
            app.notify(f"Removed for this run; could not update its file: {e}", severity="error")
        else:
            where = f"removed from {path}" if path else "not in a file: removed for this run"
            app.notify(f"{visible(rule.value)}: {where}", markup=False)
        show(app, settings, ctx, index)

    screen = PermissionsScreen(
        [r.label for r in rules], highlight, workspace=visible(str(ctx.workspace))
    )
    if ctx.saved.problem:
        app.notify(ctx.saved.problem, severity="warning", markup=False)
    app.push_screen(screen, done)

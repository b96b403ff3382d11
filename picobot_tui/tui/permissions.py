"""`/permissions` (and the palette's Permissions): list the always-allow rules saved in
config.json (`tools.alwaysAllow`, `tools.web.allowHosts`) and remove them.

A removal takes effect at once (the run's settings) and in config.json; a rule that the file
does not hold (set by an environment variable, say) is dropped for this run and the user is
told where it came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picobot_tui.config.remember import forget_rule, stored_rules
from picobot_tui.widgets.permissions import PermissionsScreen

if TYPE_CHECKING:
    from textual.app import App

    from picobot_tui.config.settings import Settings


def show(app: App[Any], settings: Settings, highlight: int = 0) -> None:
    """Open the list; a removal reopens it on the next rule."""
    rules = stored_rules(settings)

    def done(index: int | None) -> None:
        if index is None or not 0 <= index < len(rules):
            return
        rule = rules[index]
        try:
            path = forget_rule(settings, rule)
        except (OSError, ValueError) as e:
            app.notify(f"Removed for this run; could not update config.json: {e}", severity="error")
        else:
            where = f"removed from {path}" if path else "not in config.json: removed for this run"
            app.notify(f"{rule.value}: {where}", markup=False)
        show(app, settings, index)

    app.push_screen(PermissionsScreen([r.label for r in rules], highlight), done)

"""Which side panes (tool timeline, budget gauge) show: screen classes the stylesheet reads.

On a wide screen each pane hides on its own; on a narrow one (under 100 columns) the side
column is an overlay that opens and closes as a whole."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.screen import Screen


def apply_ui(screen: Screen, ui: dict[str, Any]) -> None:
    """Show or hide the panes as the `ui` settings (or a peek at them) say."""
    screen.set_class(not ui.get("show_timeline", True), "-hide-timeline")
    screen.set_class(not ui.get("show_gauge", True), "-hide-gauge")


def toggle(screen: Screen, cls: str) -> None:
    """Toggle one pane (`-hide-timeline`, `-hide-gauge`), or the overlay when narrow."""
    if screen.has_class("-narrow"):
        screen.toggle_class("-side-open")
        if screen.has_class("-side-open"):
            screen.remove_class(cls)
    else:
        screen.toggle_class(cls)


def budget_in_status(screen: Screen, width: int) -> bool:
    """The status bar shows the budget when the gauge cannot be seen."""
    return width < 100 or screen.has_class("-hide-gauge")


def rich_theme(app: App[Any]) -> None:
    """Inline code in frozen (rich) markdown follows the Textual theme (as the panes, it
    follows the `ui` settings)."""
    from rich.theme import Theme

    theme = app.current_theme
    colour = (theme.accent if theme.dark else theme.primary) or "cyan"
    app.console.push_theme(Theme({"markdown.code": f"bold {colour}"}))

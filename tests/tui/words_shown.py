"""Whether a screen shows every word it means to: the text of each dialog, notice and toast on
the screen, split into words, each found whole in one line of what the compositor draws
(issue 25, point 6: "what it wrote so far is s", a notice's last line, a toast's file name).

A word is exempt only when its widget is not wholly in the window of a container that
scrolls (the user can bring it into view) or sits in a list widget (OptionList rows are shortened on purpose, with "…").
"""

from __future__ import annotations

from textual.app import App
from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import Button, Label, Static
from textual.widgets._toast import Toast


def screen_lines(app: App) -> list[str]:
    """The text of every line the screen would draw now (every layer: modals, toasts)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _scrolled_away(widget: Widget) -> bool:
    """Not wholly inside the window of a container that scrolls (the user scrolls to it)."""
    for node in widget.ancestors:
        scroller = isinstance(node, ScrollableContainer) and node is not widget.screen
        scrolls = scroller and (node.max_scroll_y > 0 or node.max_scroll_x > 0)
        if scrolls and not node.content_region.contains_region(widget.region):
            return True
    return False


def _text(widget: Widget) -> str:
    if isinstance(widget, Toast):
        return str(widget.render())
    if isinstance(widget, Button):
        return str(widget.label)
    return str(widget.render())


DIALOG_KINDS: tuple[type[Widget], ...] = (Static, Label, Button, Toast)


def meant_texts(app: App, kinds: tuple[type[Widget], ...] = DIALOG_KINDS) -> list[str]:
    """The texts the screen means to show whole: its widgets of `kinds` (a dialog's Statics,
    Labels, Buttons, and the toasts), shown and not in a scrolled container."""
    texts = []
    for widget in app.screen.query("*"):
        if not isinstance(widget, kinds) or not widget.display or not widget.visible:
            continue
        if widget.region.area == 0 or _scrolled_away(widget):
            continue
        text = _text(widget).strip()
        if text:
            texts.append(text)
    return texts


def cut_words(app: App, kinds: tuple[type[Widget], ...] = DIALOG_KINDS) -> list[str]:
    """The words of `meant_texts(app, kinds)` that no drawn line holds whole."""
    lines = screen_lines(app)
    missing = []
    for text in meant_texts(app, kinds):
        for word in text.split():
            if not any(word in line for line in lines):
                missing.append(word)
    return missing

"""Toasts as plain text: every `notify` of the app (widgets and screens call the app's).

A toast names what the user, a client or the model wrote: a session title, a file the
model created, a rule, a server's error. Textual reads a toast's message as markup by
default, so a session titled `… [/]` raised MarkupError when the toast was drawn (the app
died) and `[@click=app.quit]…[/]` drew a clickable action. Here the message is never
markup, and its controls are stand-ins (`visible`; the title is a `label`).
"""

from __future__ import annotations

from typing import Any

from picobot_tui.core.visible import label, visible


class PlainToasts:
    """Mixed into PicobotApp, before `App`: its `notify` wraps Textual's."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,  # accepted, never used: no caller's text is markup
    ) -> None:
        """Textual's `App.notify`, with `message` shown as text (controls as stand-ins)."""
        notify: Any = super().notify  # type: ignore[misc]
        extra = {} if timeout is None else {"timeout": timeout}
        notify(visible(str(message)), title=label(title), severity=severity, markup=False, **extra)

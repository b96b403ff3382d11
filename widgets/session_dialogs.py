"""Small modal dialogs of the session browser: rename, and confirm delete."""

from __future__ import annotations

from pathlib import Path

import picobot_tui.styles
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from picobot_tui.core.visible import label

CSS_FILE = Path(picobot_tui.styles.__file__).parent / "session_browser.tcss"


class RenameDialog(ModalScreen[str | None]):
    """Asks for a new title; dismisses with it, or None."""

    CSS_PATH = CSS_FILE
    # Without it the dialog takes the app's AUTO_FOCUS (the main screen's prompt), finds
    # nothing here, and typing went nowhere until Tab.
    AUTO_FOCUS = "#rename-input"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Rename session", classes="dialog-title")
            yield Input(value=self._title, placeholder="title", id="rename-input")
            yield Label("Enter to save · Esc to cancel", classes="dialog-hint")

    @on(Input.Submitted, "#rename-input")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(" ".join(event.value.split()) or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDeleteDialog(ModalScreen[bool]):
    """Delete or keep; Cancel has the focus, so a stray Enter keeps the session."""

    CSS_PATH = CSS_FILE
    AUTO_FOCUS = "#cancel"
    BINDINGS = [
        Binding("escape,n", "cancel", "Keep"),
        Binding("y", "confirm", "Delete"),
    ]

    def __init__(self, title: str, key: str) -> None:
        super().__init__()
        self._title, self._key = title, key

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Delete session?", classes="dialog-title")
            yield Static(
                f"“{label(self._title)}”\n{self._key}", markup=False, classes="dialog-body"
            )
            yield Label("This cannot be undone.", classes="dialog-hint")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Delete (y)", variant="error", id="confirm")
                yield Button("Keep (n)", id="cancel")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

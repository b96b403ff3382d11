"""Asks before quitting while a turn runs: quit (the turn is interrupted and saved) or stay."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class QuitDialog(ModalScreen[bool]):
    """Dismisses with True (quit) or False. "Keep working" has the focus: a stray Enter stays."""

    AUTO_FOCUS = "#stay"
    BINDINGS = [
        Binding("y", "confirm", "Quit"),
        Binding("escape,n", "stay", "Keep working"),
    ]
    DEFAULT_CSS = """
    QuitDialog { align: center middle; }
    QuitDialog > Vertical {
        width: 56; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    /* A Label is as wide as its text: in the 52 cells here it was cut, not wrapped ("what
       it wrote so far is s"). */
    QuitDialog Label { width: 100%; }
    QuitDialog Horizontal { height: auto; margin-top: 1; }
    QuitDialog Button { margin-right: 2; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("A turn is running. Quit anyway?")
            yield Label("The turn is interrupted; what it wrote so far is saved.")
            with Horizontal():
                yield Button("Quit (y)", variant="warning", id="quit")
                yield Button("Keep working (n)", id="stay")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "quit")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_stay(self) -> None:
        self.dismiss(False)

"""Asks what to do with the plan the agent just gave (plan mode): carry it out, keep
planning, discard it, or save its steps to TODO.md."""

from __future__ import annotations

from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

PlanChoiceName = Literal["go", "keep", "discard", "todo"]


class PlanChoice(ModalScreen[str]):
    """Dismisses with "go", "keep", "discard" or "todo". Esc keeps planning (nothing runs)."""

    AUTO_FOCUS = "#go"
    BINDINGS = [
        Binding("g", "choose('go')", "Carry it out"),
        Binding("escape,k", "choose('keep')", "Keep planning"),
        Binding("d", "choose('discard')", "Discard"),
        Binding("t", "choose('todo')", "Save to TODO.md"),
    ]
    DEFAULT_CSS = """
    PlanChoice { align: center bottom; }
    PlanChoice > Vertical {
        width: 100%; max-width: 100; height: auto; padding: 0 2; margin-bottom: 3;
        border: thick $accent; background: $surface;
    }
    PlanChoice Label { width: 100%; }
    PlanChoice Horizontal { height: auto; }
    PlanChoice Button { margin-right: 1; min-width: 10; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("The plan is above. Carry it out? (plan mode ends; the plan stays)")
            with Horizontal():
                yield Button("Carry it out (g)", variant="primary", id="go")
                yield Button("Keep planning (k)", id="keep")
                yield Button("Discard (d)", id="discard")
                yield Button("Save to TODO.md (t)", id="todo")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id or "keep")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)

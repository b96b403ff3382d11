"""`/permissions`: the saved always-allow rules, one per line, each with its scope ("[this
workspace]" or "[everywhere]"); `d` (or Delete) removes the one under the cursor, Esc closes.

The screen only shows what it is given and dismisses with the index of the rule to remove
(None to close); the caller removes it and opens the list again.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class PermissionsScreen(ModalScreen[int | None]):
    """The rules as (label) lines; dismisses with the index to remove, or None."""

    DEFAULT_CSS = """
    PermissionsScreen { align: center middle; background: $background 60%; }
    #permissions-dialog {
        width: 90%; max-width: 100; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    #permissions-title { height: auto; margin-bottom: 1; }
    #permissions-list { height: auto; max-height: 20; }
    #permissions-empty { height: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar = [
        Binding("d,delete", "remove", "Remove rule"),
        Binding("escape,q", "close", "Close"),
    ]

    def __init__(self, labels: list[str], highlight: int = 0, *, workspace: str = "") -> None:
        super().__init__(classes="permissions")
        self.labels = labels
        self.workspace = workspace
        """The workspace "[this workspace]" rules are saved for (shown in the title)."""
        self.highlight = min(max(highlight, 0), max(len(labels) - 1, 0))

    def compose(self) -> ComposeResult:
        with Vertical(id="permissions-dialog"):
            yield Static(
                Content.assemble(
                    ("Always-allowed", "bold"),
                    ("  d remove · Esc close", "$text-muted"),
                    (
                        f"\nthis workspace ({self.workspace}): permissions.json · everywhere: "
                        "config.json",
                        "$text-muted",
                    ),
                ),
                id="permissions-title",
            )
            if self.labels:
                yield OptionList(
                    *(
                        Option(Content(label), id=f"rule-{i}")
                        for i, label in enumerate(self.labels)
                    ),
                    id="permissions-list",
                )
            else:
                yield Static(
                    'No saved rules. The approval dialog\'s "Always here" and "Everywhere" add them.',
                    id="permissions-empty",
                )

    def on_mount(self) -> None:
        if self.labels:
            options = self.query_one(OptionList)
            options.highlighted = self.highlight
            options.focus()

    def action_remove(self) -> None:
        if not self.labels:
            return
        index = self.query_one(OptionList).highlighted
        if index is not None:
            self.dismiss(index)

    def action_close(self) -> None:
        self.dismiss(None)

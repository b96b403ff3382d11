"""The trust question: the first time the TUI opens in a folder it was not told to use.

Dismisses with True (trust: its AGENTS.md, skills, kb/ and TODO.md go into the prompt and
the tools may change files and run commands, with approval) or False (read-only, its files
left out). The folder's path is shown as plain text, never markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from picobot_tui.core.visible import visible


class TrustScreen(ModalScreen[bool]):
    """Ask whether picobot may work in `folder`."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; background: $background 60%; }
    #trust-dialog {
        width: 90%; max-width: 90; height: auto; border: thick $warning;
        background: $surface; padding: 1 2;
    }
    #trust-title { height: auto; margin-bottom: 1; }
    #trust-body { height: auto; }
    #trust-buttons { height: auto; margin-top: 1; align-horizontal: center; }
    #trust-buttons Button { margin: 0 1; min-width: 10; }
    """
    BINDINGS: ClassVar = [
        Binding("y", "choose(True)", "Trust"),
        Binding("n,escape", "choose(False)", "Read-only"),
    ]

    def __init__(self, folder: Path) -> None:
        super().__init__(classes="trust")
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog"):
            yield Static(
                Content.assemble(
                    ("Trust this folder?\n", "bold"),
                    (visible(str(self.folder)), "bold $text-warning"),
                ),
                id="trust-title",
            )
            yield Static(
                Content(
                    "picobot works in the folder it was started in. In a folder you trust, its "
                    "AGENTS.md (and those above it up to the git root), skills, commands, kb/ "
                    "and TODO.md are read, and the agent may "
                    "change files and run commands (asking you first). Otherwise the agent only "
                    "reads: its files stay out of the prompt and every change is refused.\n"
                    "Your answer is remembered for this folder; --workspace DIR never asks."
                ),
                id="trust-body",
            )
            with Horizontal(id="trust-buttons"):
                yield Button(Content("Trust [y]"), id="trust-yes", variant="primary")
                yield Button(Content("Read-only [n]"), id="trust-no", variant="error")

    def on_mount(self) -> None:
        # Enter answers read-only: a stray or typed-ahead Enter (the user was sending their
        # first message as the question came up) must never grant trust; `y` or a click does.
        self.query_one("#trust-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust-yes")

    def action_choose(self, trusted: bool) -> None:
        self.dismiss(trusted)

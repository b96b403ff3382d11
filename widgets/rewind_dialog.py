"""The rewind dialogs: pick a user message, pick what to restore, and the conflict question.

`RewindScreen(turns)` lists the session's user messages (oldest first, the last one
highlighted), each with what its turn changed (`3 files, +40 −12`). Enter on one shows the
three choices; it dismisses with `(turn, mode)`, mode one of `MODES`, or None (Esc).

`ConflictScreen(files)` asks before files changed after the agent's change (by the user or
another program) are overwritten: "overwrite" (them too), "keep" (restore the others only)
or None (cancel, nothing restored). Nothing is ever discarded without this answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from picobot_tui.core.visible import label

Mode = Literal["both", "conversation", "code"]
MODES: tuple[tuple[Mode, str, str, str], ...] = (
    (
        "both",
        "Restore code and conversation",
        "b",
        "files go back to before this message; the conversation goes on as a branch",
    ),
    ("conversation", "Restore conversation only", "c", "a branch from here; files untouched"),
    ("code", "Restore code only", "f", "files go back; the conversation goes on as it is"),
)


@dataclass(frozen=True)
class TurnItem:
    """One user message of the session: its turn number, text and what the turn changed."""

    turn: int
    text: str
    changes: str = ""  # "3 files, +40 −12", "" when it changed no file


def _one_line(text: str, width: int = 70) -> str:
    return label(text, width)


class RewindScreen(ModalScreen[tuple[int, Mode] | None]):
    """Choose the message to rewind to, then what to restore."""

    DEFAULT_CSS = """
    RewindScreen { align: center middle; background: $background 60%; }
    #rewind-dialog {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    #rewind-title, #rewind-hint { height: auto; margin-bottom: 1; }
    #rewind-turns { height: auto; max-height: 20; }
    #rewind-choices { height: auto; display: none; }
    #rewind-choices Button { width: 100%; margin-top: 1; }
    #rewind-chosen { height: auto; }
    """
    BINDINGS: ClassVar = [
        Binding("escape", "back", "Back"),
        *(Binding(key, f"mode('{mode}')", label, show=False) for mode, label, key, _ in MODES),
    ]

    def __init__(self, turns: list[TurnItem]) -> None:
        super().__init__(classes="rewind")
        self.turns = turns
        self.chosen: TurnItem | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-dialog"):
            yield Static(
                Content.assemble(
                    ("Rewind", "bold"),
                    ("  to just before one of your messages", "$text-muted"),
                ),
                id="rewind-title",
            )
            options = [Option(self._prompt(t), id=f"turn-{t.turn}") for t in self.turns]
            yield OptionList(*options, id="rewind-turns")
            with Vertical(id="rewind-choices"):
                yield Static("", id="rewind-chosen")
                for mode, label, key, help in MODES:
                    yield Button(
                        Content.assemble((f"{label} [{key}]", "bold"), (f"  {help}", "")),
                        id=f"rewind-{mode}",
                        variant="primary" if mode == "both" else "default",
                    )
            yield Static(Content.styled("Enter choose · Esc back", "$text-muted"), id="rewind-hint")

    @staticmethod
    def _prompt(item: TurnItem) -> Content:
        changes = item.changes or "no file changes"
        return Content.assemble(
            (f"{item.turn:>3}  ", "$text-muted"),
            (_one_line(item.text), "bold"),
            "\n     ",
            (changes, "$text-success" if item.changes else "$text-muted"),
        )

    def on_mount(self) -> None:
        turns = self.query_one("#rewind-turns", OptionList)
        if self.turns:
            turns.highlighted = len(self.turns) - 1
        turns.focus()

    @on(OptionList.OptionSelected, "#rewind-turns")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        turn = int((event.option.id or "turn-0").removeprefix("turn-"))
        self.choose_turn(turn)

    def choose_turn(self, turn: int) -> None:
        """Show the three choices for `turn`."""
        self.chosen = next((t for t in self.turns if t.turn == turn), None)
        if self.chosen is None:
            return
        self.query_one("#rewind-turns").display = False
        self.query_one("#rewind-choices").display = True
        self.query_one("#rewind-chosen", Static).update(
            Content.assemble(
                (f"Turn {turn}: ", "$text-muted"),
                (_one_line(self.chosen.text, 90), "bold"),
                ("\n" + (self.chosen.changes or "no file changes"), "$text-muted"),
            )
        )
        self.query_one("#rewind-both", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The b/c/f keys choose only once a message is chosen."""
        return action != "mode" or self.chosen is not None

    def action_mode(self, mode: str) -> None:
        if self.chosen is not None and mode in ("both", "conversation", "code"):
            self.dismiss((self.chosen.turn, mode))  # type: ignore[arg-type]

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_mode((event.button.id or "").removeprefix("rewind-"))

    def action_back(self) -> None:
        """Esc: from the choices back to the list, from the list out."""
        if self.chosen is None:
            self.dismiss(None)
            return
        self.chosen = None
        self.query_one("#rewind-choices").display = False
        turns = self.query_one("#rewind-turns", OptionList)
        turns.display = True
        turns.focus()


Answer = Literal["overwrite", "keep"]


class ConflictScreen(ModalScreen[Answer | None]):
    """Files changed after the agent's change: overwrite them, keep them, or cancel."""

    AUTO_FOCUS = "#conflict-cancel"
    DEFAULT_CSS = """
    ConflictScreen { align: center middle; background: $background 60%; }
    #conflict-dialog {
        width: 90%; max-width: 100; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    #conflict-title, #conflict-files { height: auto; margin-bottom: 1; }
    #conflict-buttons { height: auto; }
    #conflict-buttons Button { margin-right: 2; }
    """
    BINDINGS: ClassVar = [
        Binding("o", "answer('overwrite')", "Overwrite them"),
        Binding("k", "answer('keep')", "Keep them"),
        Binding("escape", "answer('cancel')", "Cancel"),
    ]

    def __init__(self, files: list[str], what: str = "restore") -> None:
        super().__init__(classes="conflict")
        self.files = files
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-dialog"):
            yield Static(
                Content.assemble(
                    ("These files were changed after the agent's change", "bold $text-warning"),
                    (" (by you or another program). ", "$text-muted"),
                    (f"The {self.what} would overwrite those edits:", "$text-muted"),
                ),
                id="conflict-title",
            )
            yield Static(Content("\n".join(f"  {f}" for f in self.files)), id="conflict-files")
            with Horizontal(id="conflict-buttons"):
                yield Button("Overwrite them [o]", variant="error", id="conflict-overwrite")
                yield Button("Keep them, restore the rest [k]", id="conflict-keep")
                yield Button("Cancel [Esc]", variant="primary", id="conflict-cancel")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer((event.button.id or "").removeprefix("conflict-"))

    def action_answer(self, answer: str) -> None:
        self.dismiss(answer if answer in ("overwrite", "keep") else None)  # type: ignore[arg-type]

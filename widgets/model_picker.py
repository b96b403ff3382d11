"""`/model` with no name: a list of the models to switch to, the one in use marked.

The screen shows what it is given: `names` (the caller may set it again when a slower list,
the server's or LiteLLM's, arrives), `current` (marked, and highlighted when opened) and
`configured` (marked as the config's). Typing filters the list; Enter or a click dismisses
with the name, Esc with None. Names are shown as text, never markup.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from picobot_tui.core.visible import label

SHOWN = 200
"""At most this many rows (LiteLLM knows hundreds of names): typing narrows them."""


class ModelPicker(ModalScreen[str | None]):
    """Choose the model for the next turns."""

    DEFAULT_CSS = """
    ModelPicker { align: center middle; background: $background 60%; }
    #model-dialog {
        width: 90%; max-width: 90; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    #model-title { height: auto; margin-bottom: 1; }
    #model-filter { height: 1; border: none; padding: 0 1; background: $panel; }
    #model-list { height: auto; max-height: 16; margin-top: 1; }
    #model-more { height: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
    ]

    names: reactive[tuple[str, ...]] = reactive((), init=False)

    def __init__(self, names: list[str], current: str, configured: str = "") -> None:
        super().__init__(classes="model-picker")
        self.current = current
        self.configured = configured
        self.set_reactive(ModelPicker.names, tuple(names))
        self._composed = False

    def compose(self) -> ComposeResult:
        with Vertical(id="model-dialog"):
            yield Static(
                Content.assemble(
                    ("Switch model", "bold"),
                    ("  for the next turns · Enter choose · Esc cancel", "$text-muted"),
                ),
                id="model-title",
            )
            yield Input(placeholder="type to filter", id="model-filter")
            yield OptionList(id="model-list")
            yield Static("", id="model-more")

    def on_mount(self) -> None:
        self._composed = True  # `is_mounted` is not True yet while this runs
        self._fill()
        self.query_one(Input).focus()

    def watch_names(self) -> None:
        self._fill()

    def _row(self, name: str) -> Content:
        marks = []
        if name == self.current:
            marks.append("in use")
        if name == self.configured:
            marks.append("config")
        return Content.assemble(
            ("● " if name == self.current else "  ", "bold $text-success"),
            (label(name), "bold" if name == self.current else ""),
            (f"  ({', '.join(marks)})" if marks else "", "$text-muted"),
        )

    def matching(self) -> list[str]:
        """The names the filter lets through (every word of it, in any order)."""
        words = self.query_one(Input).value.lower().split()
        return [n for n in self.names if all(w in n.lower() for w in words)]

    def _fill(self) -> None:
        if not self._composed:  # set before the screen was mounted: on_mount fills it
            return
        options = self.query_one(OptionList)
        found = self.matching()
        keep = options.highlighted_option.id if options.highlighted_option else self.current
        options.clear_options()
        options.add_options(Option(self._row(n), id=n) for n in found[:SHOWN])
        ids = found[:SHOWN]
        options.highlighted = ids.index(keep) if keep in ids else (0 if ids else None)
        more = len(found) - len(ids)
        self.query_one("#model-more", Static).update(
            f"… {more} more: type to narrow" if more else ("no match" if not found else "")
        )

    @on(Input.Changed, "#model-filter")
    def _filtered(self, event: Input.Changed) -> None:
        event.stop()
        self._fill()

    @on(Input.Submitted, "#model-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        option = self.query_one(OptionList).highlighted_option
        if option is not None:
            self.dismiss(option.id)

    @on(OptionList.OptionSelected, "#model-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_move(self, step: int) -> None:
        """Up and Down move in the list while the filter has the focus."""
        options = self.query_one(OptionList)
        if options.option_count:
            now = options.highlighted if options.highlighted is not None else -1
            options.highlighted = max(0, min(options.option_count - 1, now + step))

    def action_cancel(self) -> None:
        self.dismiss(None)

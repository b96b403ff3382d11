"""The prompt: multi-line input with history, slash-command completion and a visible queue.

Enter sends, Shift+Enter or Ctrl+J inserts a newline, Up/Down walk the history when the cursor
is on the first/last line, Tab completes a slash command. Posts `PromptArea.Submitted(text)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from .textual_compat import KeyFirstTextArea


class SlashCommand(NamedTuple):
    name: str  # without the slash
    args: str  # e.g. "ID", "" when none
    help: str


class PromptInput(KeyFirstTextArea):
    """A TextArea whose Enter submits instead of inserting a newline.

    Up/Down/Tab/Escape it hands up as `Navigate` when the parent set (attributes down) that
    they mean something there: the completion list is open, or the history can be walked
    from where the cursor is. The decision is made here, when the key arrives, because the
    message is handled later; other keys stay the TextArea's."""

    completing = False
    """The completion list is open: Up/Down/Tab/Escape are its keys."""
    has_history = False
    """There are sent messages to walk back to with Up (from the first line)."""
    in_history = False
    """A history entry is shown: Down (from the last line) walks forward."""

    class Submit(Message):
        pass

    class Navigate(Message):
        """Up/Down/Tab/Escape for the parent (history, completion)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def navigates(self, key: str) -> bool:
        """Whether `key` is the parent's (see the class docstring)."""
        if self.completing:
            return key in ("up", "down", "tab", "escape")
        row, _ = self.cursor_location
        if key == "up":
            return row == 0 and self.has_history
        if key == "down":
            return self.in_history and row == self.document.line_count - 1
        return False

    async def key_first(self, event: events.Key) -> bool:
        key = event.key
        if key == "enter":
            self.post_message(self.Submit())
        elif key in ("shift+enter", "ctrl+j"):
            start, end = self.selection
            self.insert_as_typed("\n", start, end)
        elif self.navigates(key):
            self.post_message(self.Navigate(key))
        else:
            return False
        event.stop()
        event.prevent_default()
        return True


class PromptArea(Vertical):
    """Queue display + completion list + the input."""

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        commands: Sequence[SlashCommand] = (),
        *,
        cursor_blink: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.commands = list(commands)
        self.history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._cursor_blink = cursor_blink
        self.queue: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="queue", markup=False)
        yield OptionList(id="completions")
        text_area = PromptInput(
            id="prompt-input",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            placeholder="Message picobot — Enter to send, Shift+Enter for a newline, / for commands",
        )
        text_area.cursor_blink = self._cursor_blink
        yield text_area

    def on_mount(self) -> None:
        self.query_one("#queue").display = False
        self._show_completions(False)

    @property
    def input(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def completions(self) -> OptionList:
        return self.query_one("#completions", OptionList)

    @property
    def text(self) -> str:
        return self.input.text

    @text.setter
    def text(self, value: str) -> None:
        self.input.text = value
        lines = value.split("\n")
        self.input.move_cursor((len(lines) - 1, len(lines[-1])))

    # -- queue ---------------------------------------------------------------------------
    def set_queue(self, queue: Sequence[str]) -> None:
        self.queue = list(queue)
        widget = self.query_one("#queue", Static)
        widget.display = bool(queue)
        if queue:
            lines = [f"queued ({len(queue)}) — sent when the agent is done:"]
            lines += [f"  {i}. {' '.join(q.split())[:70]}" for i, q in enumerate(queue, 1)]
            widget.update(Content("\n".join(lines)))

    # -- submit and history --------------------------------------------------------------
    def on_prompt_input_submit(self, message: PromptInput.Submit) -> None:
        message.stop()
        if self.completions.display and self._accept_completion(submit=True):
            return
        text = self.input.text
        if not text.strip():
            return
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self._set_history_index(None)
        self.input.has_history = True
        self.input.clear()
        self.post_message(self.Submitted(text))

    def on_prompt_input_navigate(self, message: PromptInput.Navigate) -> None:
        """Up/Down/Tab/Escape the input handed up: completion first, then history."""
        message.stop()
        key = message.key
        if self.completions.display:
            if key == "up":
                self.completions.action_cursor_up()
            elif key == "down":
                self.completions.action_cursor_down()
            elif key == "tab":
                self._accept_completion()
            elif key == "escape":
                self._show_completions(False)
            return
        if key == "up" and self.history:
            if self._history_index is None:
                self._draft = self.input.text
                index = len(self.history) - 1
            else:
                index = max(self._history_index - 1, 0)
            self._set_history_index(index)
            self.text = self.history[index]
        elif key == "down" and self._history_index is not None:
            if self._history_index + 1 >= len(self.history):
                self._set_history_index(None)
                self.text = self._draft
            else:
                self._set_history_index(self._history_index + 1)
                self.text = self.history[self._history_index]

    def _set_history_index(self, index: int | None) -> None:
        self._history_index = index
        self.input.in_history = index is not None

    def _show_completions(self, show: bool) -> None:
        self.completions.display = show
        self.input.completing = show

    # -- completion ----------------------------------------------------------------------
    def matches(self, text: str) -> list[SlashCommand]:
        if not text.startswith("/") or "\n" in text or " " in text:
            return []
        word = text[1:].lower()
        return [c for c in self.commands if c.name.startswith(word)]

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        matches = self.matches(self.input.text)
        exact = len(matches) == 1 and f"/{matches[0].name}" == self.input.text
        if not matches or exact:
            self._show_completions(False)
            return
        self.completions.clear_options()
        for c in matches:
            label = Content.assemble(
                (f"/{c.name}", "bold"),
                (f" {c.args}" if c.args else "", "$text-accent"),
                ("  " + c.help, "$text-muted"),
            )
            self.completions.add_option(Option(label, id=c.name))
        self.completions.highlighted = 0
        self._show_completions(True)

    def _accept_completion(self, submit: bool = False) -> bool:
        index = self.completions.highlighted
        if index is None:
            return False
        option = self.completions.get_option_at_index(index)
        command = next((c for c in self.commands if c.name == option.id), None)
        if command is None:
            return False
        self._show_completions(False)
        if submit and not command.args:
            self.text = f"/{command.name}"
            self.on_prompt_input_submit(PromptInput.Submit())
            return True
        self.text = f"/{command.name}" + (" " if command.args else "")
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._accept_completion()
        self.input.focus()

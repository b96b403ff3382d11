"""The prompt: multi-line input with history, completion and a visible queue.

Enter sends, Shift+Enter or Ctrl+J inserts a newline, Up/Down walk the history when the cursor
is on the first/last line, Tab completes (again: the next candidate; it never moves the focus),
PgUp/PgDn (and Home/End on an empty prompt) scroll the transcript. Posts
`PromptArea.Submitted(text)` and `PromptArea.ScrollRequested(key)`.

Completion is pluggable: `PromptArea.completion_sources` holds functions from the prompt's
text to `Completion`s; the slash commands are the first source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from .textual_compat import KeyFirstTextArea

SCROLL_KEYS = ("pageup", "pagedown", "home", "end")
"""Keys the prompt hands to the transcript (Home/End only while the prompt is empty)."""


PLACEHOLDERS = {
    "default": "Message picobot — Enter to send, Shift+Enter for a newline, / for commands",
    "plan": "Plan mode: ask for a plan — nothing is changed until you carry it out",
}


class SlashCommand(NamedTuple):
    name: str  # without the slash
    args: str  # e.g. "ID", "" when none
    help: str


class Completion(NamedTuple):
    """A candidate for the prompt's text."""

    text: str
    """What the prompt's text becomes, e.g. "/compact" or "/model " (more to type)."""
    label: str
    """Shown in the list, e.g. "/model"."""
    args: str = ""
    help: str = ""
    submit: bool = False
    """Enter on it sends it at once (a command without arguments)."""


CompletionSource = Callable[[str], Sequence[Completion]]
"""The candidates for the prompt's whole text (none: an empty sequence)."""


def slash_completions(commands: Sequence[SlashCommand]) -> CompletionSource:
    """The slash commands whose name starts with what follows `/`."""

    def complete(text: str) -> list[Completion]:
        if not text.startswith("/") or "\n" in text or " " in text:
            return []
        word = text[1:].lower()
        return [
            Completion(
                f"/{c.name}" + (" " if c.args else ""),
                f"/{c.name}",
                c.args,
                c.help,
                submit=not c.args,
            )
            for c in commands
            if c.name.startswith(word)
        ]

    return complete


class PromptInput(KeyFirstTextArea):
    """A TextArea whose Enter submits instead of inserting a newline.

    Up/Down/Escape it hands up as `Navigate` when the parent set (attributes down) that
    they mean something there: the completion list is open, or the history can be walked
    from where the cursor is. Tab, Shift+Tab, PgUp and PgDn always go up, Home and End on an
    empty prompt. The decision is made here, when the key arrives, because the message is
    handled later. The TextArea's own editing keys (backspace, ctrl+w...) run here too,
    not after the key bubbled to the app, so they apply before a later Enter submits."""

    completing = False
    """The completion list is open: Up/Down/Escape are its keys."""
    has_history = False
    """There are sent messages to walk back to with Up (from the first line)."""
    in_history = False
    """A history entry is shown: Down (from the last line) walks forward."""

    class Submit(Message):
        pass

    class Navigate(Message):
        """Up/Down/Tab/Escape/scroll keys for the parent (history, completion, transcript)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def navigates(self, key: str) -> bool:
        """Whether `key` is the parent's (see the class docstring)."""
        if key in ("tab", "shift+tab", "pageup", "pagedown"):
            return True
        if key in ("home", "end"):
            return not self.text
        if self.completing:
            return key in ("up", "down", "escape")
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
        elif not await self.run_own_binding(key):
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

    class ScrollRequested(Message):
        """Scroll the transcript: `key` is one of SCROLL_KEYS."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    class ModeCycleRequested(Message):
        """Shift+Tab with nothing to complete: the app switches the agent's mode."""

    def __init__(
        self,
        commands: Sequence[SlashCommand] = (),
        *,
        cursor_blink: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.commands = list(commands)
        self.completion_sources: list[CompletionSource] = [slash_completions(self.commands)]
        """Asked in order; add one to complete more (e.g. a command's arguments)."""
        self.history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._cursor_blink = cursor_blink
        self.queue: list[str] = []
        self._candidates: list[Completion] = []
        self._cycling = False
        """Tab put a candidate in the prompt: its Changed keeps the list as it is."""

    def compose(self) -> ComposeResult:
        yield Static("", id="queue", markup=False)
        yield OptionList(id="completions")
        text_area = PromptInput(
            id="prompt-input",
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            placeholder=PLACEHOLDERS["default"],
        )
        text_area.cursor_blink = self._cursor_blink
        yield text_area

    def on_mount(self) -> None:
        self.query_one("#queue").display = False
        self._show_completions(False)

    def set_mode(self, mode: str) -> None:
        """Show the agent's mode: in plan mode the top border and the placeholder say so."""
        plan = mode == "plan"
        self.set_class(plan, "-plan")
        self.border_title = (
            "plan mode · only reading tools run · Shift+Tab: leave" if plan else None
        )
        self.input.placeholder = PLACEHOLDERS["plan" if plan else "default"]

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

    def load_history(self, entries: Sequence[str]) -> None:
        """Older entries (e.g. from earlier runs) before those sent in this one."""
        if not entries:
            return
        self.history = [*entries, *self.history]
        if self._history_index is not None:
            self._history_index += len(entries)
        self.input.has_history = True

    def on_prompt_input_navigate(self, message: PromptInput.Navigate) -> None:
        """The keys the input handed up: scrolling, Tab, the open completion list, history."""
        message.stop()
        key = message.key
        if key in SCROLL_KEYS:
            self.post_message(self.ScrollRequested(key))
        elif key in ("tab", "shift+tab"):
            if not self._tab(-1 if key == "shift+tab" else 1) and key == "shift+tab":
                self.post_message(self.ModeCycleRequested())
        elif self.completions.display:
            if key == "up":
                self.completions.action_cursor_up()
            elif key == "down":
                self.completions.action_cursor_down()
            elif key == "escape":
                self._show_completions(False)
        elif key == "up" and self.history:
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
        if not show:
            self._cycling = False

    # -- completion ----------------------------------------------------------------------
    def complete(self, text: str) -> list[Completion]:
        """Every source's candidates for `text`, without repeats."""
        seen: set[str] = set()
        out: list[Completion] = []
        for source in self.completion_sources:
            for candidate in source(text):
                if candidate.text not in seen:
                    seen.add(candidate.text)
                    out.append(candidate)
        return out

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        text = self.input.text
        if self._cycling and any(c.text == text for c in self._candidates):
            return  # Tab put this candidate here: keep cycling through the same list
        self._cycling = False
        self._update_completions(text)

    def _update_completions(self, text: str) -> None:
        found = self.complete(text)
        exact = len(found) == 1 and found[0].text.rstrip() == text
        if not found or exact:
            self._candidates = []
            self._show_completions(False)
            return
        self._candidates = found
        self.completions.clear_options()
        for c in found:
            label = Content.assemble(
                (c.label, "bold"),
                (f" {c.args}" if c.args else "", "$text-accent"),
                ("  " + c.help if c.help else "", "$text-muted"),
            )
            self.completions.add_option(Option(label, id=c.text.strip("/ ")))
        self.completions.highlighted = 0
        self._show_completions(True)

    def _tab(self, step: int) -> bool:
        """Complete: the highlighted candidate, or (when it is already in the prompt) the
        next one; a single candidate is accepted. Nothing to complete: nothing happens
        (False)."""
        if not self.completions.display:
            self._update_completions(self.input.text)
            if not self.completions.display:
                return False
        if len(self._candidates) == 1:
            self._accept_completion()
            return True
        index = self.completions.highlighted or 0
        if self.input.text == self._candidates[index].text:
            index = (index + step) % len(self._candidates)
        self.completions.highlighted = index
        self._cycling = True
        self.text = self._candidates[index].text
        return True

    def _accept_completion(self, submit: bool = False) -> bool:
        index = self.completions.highlighted
        if index is None or index >= len(self._candidates):
            return False
        candidate = self._candidates[index]
        self._show_completions(False)
        self.text = candidate.text
        if submit and candidate.submit:
            self.on_prompt_input_submit(PromptInput.Submit())
        return True

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._accept_completion()
        self.input.focus()

"""The tool-call timeline: a live, selectable list of this session's tool calls.

Running entries show a spinner and a live duration (driven by `tick()`, which the pane calls
from its own timer unless `live=False`, as in snapshot tests). An entry waiting for approval
(`set_waiting`) says so and its timer stands still; once answered it counts from zero, as the
call's recorded duration does (the tool's time, not the user's). Selecting an entry posts
`ToolTimeline.Selected(call_id)`; the app scrolls the conversation to that call.

A finished call posts `ToolTimeline.Finished(call_id, name, status)`; when the app learns
what it changed in files it sets `set_changes(call_id, added, removed)`, the entry shows
`+a −b`, and selecting it also posts `DiffRequested(call_id)` (the app opens its diff).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from picobot_tui.core.visible import label

from .block_text import STATUS_ICONS, format_duration, one_line_args, status_style

SPINNER = "◐◓◑◒"


@dataclass
class Entry:
    id: str
    kind: str  # "call", "stuck", "retry"
    name: str
    args: str
    iteration: int = 0
    max_iterations: int = 0
    status: str = "running"
    started: float = 0.0
    duration_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    waiting: bool = False  # waiting for the user's approval: no spinner, no timer


class ToolTimeline(Vertical):
    """Tool calls in order, with status, short args, duration and iteration k/max."""

    class Selected(Message):
        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    class DiffRequested(Message):
        """Enter on a call that changed files: show its diff."""

        def __init__(self, call_id: str) -> None:
            super().__init__()
            self.call_id = call_id

    class Finished(Message):
        """A call finished (live or from history): the app may look up what it changed."""

        def __init__(self, call_id: str, name: str, status: str) -> None:
            super().__init__()
            self.call_id = call_id
            self.name = name
            self.status = status

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        live: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.live = live
        self.entries: dict[str, Entry] = {}
        self._frame = 0
        self._notes = 0
        self.border_title = "Tools"

    def compose(self) -> ComposeResult:
        yield Static("no tool calls yet", id="timeline-empty")
        yield OptionList(id="timeline-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).display = False
        if self.live:
            self.set_interval(0.1, self.tick)

    @property
    def option_list(self) -> OptionList:
        return self.query_one(OptionList)

    def _prompt(self, e: Entry) -> Content:
        if e.kind == "call":
            if e.status == "running" and e.waiting:
                return Content.assemble(
                    ("? ", "bold $text-warning"), (label(e.name), "bold"), " ", (e.args, "dim"),
                    "\n  ", ("waiting for approval", "$text-warning"),
                )  # fmt: skip
            if e.status == "running":
                icon = SPINNER[self._frame % len(SPINNER)]
                elapsed = (self.clock() - e.started) * 1000
                duration = format_duration(max(0.0, elapsed))
            else:
                icon = STATUS_ICONS.get(e.status, "?")
                duration = format_duration(e.duration_ms) if e.duration_ms is not None else ""
            it = f"{e.iteration}/{e.max_iterations}" if e.max_iterations else ""
            changes = e.extra.get("changes")
            return Content.assemble(
                (f"{icon} ", f"bold {status_style(e.status)}"),
                (label(e.name), "bold"),
                " ",
                (e.args, "dim"),
                "\n  ",
                (duration, status_style(e.status) if e.status == "running" else "dim"),
                ("  iter " + it if it else "", "dim"),
                *(
                    (("  +" + str(changes[0]), "$text-success"), (f" −{changes[1]}", "$text-error"))
                    if changes
                    else ()
                ),
                ("  not checkpointed" if e.extra.get("not_checkpointed") else "", "$text-warning"),
            )
        icon = "⚠" if e.kind == "stuck" else "↻"
        return Content.assemble(
            (f"{icon} ", "bold $text-warning"),
            (label(e.name), "$text-warning"),
            " ",
            (e.args, "dim"),
        )

    def _show(self) -> None:
        self.query_one("#timeline-empty").display = False
        self.option_list.display = True

    def add_call(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | str,
        iteration: int = 0,
        max_iterations: int = 0,
    ) -> None:
        if call_id in self.entries:
            return
        entry = Entry(
            call_id,
            "call",
            name,
            one_line_args(arguments, 28),
            iteration,
            max_iterations,
            started=self.clock(),
        )
        self.entries[call_id] = entry
        self._show()
        self.option_list.add_option(Option(self._prompt(entry), id=call_id))
        self.option_list.highlighted = self.option_list.option_count - 1
        if max_iterations:
            self.border_title = f"Tools · iter {iteration}/{max_iterations}"

    def finish_call(self, call_id: str, status: str, duration_ms: float | None) -> None:
        entry = self.entries.get(call_id)
        if entry is None:
            return
        entry.status = status
        entry.duration_ms = duration_ms
        self.option_list.replace_option_prompt(call_id, self._prompt(entry))
        self.post_message(self.Finished(call_id, entry.name, status))

    def set_changes(self, call_id: str, added: int, removed: int) -> None:
        """What the call changed in files: shown as `+a −b`; Enter then opens its diff."""
        entry = self.entries.get(call_id)
        if entry is None:
            return
        entry.extra["changes"] = (added, removed)
        self.option_list.replace_option_prompt(call_id, self._prompt(entry))

    def set_not_checkpointed(self, call_id: str) -> None:
        """The call's changes were not checkpointed: rewind cannot undo them."""
        entry = self.entries.get(call_id)
        if entry is None:
            return
        entry.extra["not_checkpointed"] = True
        self.option_list.replace_option_prompt(call_id, self._prompt(entry))

    def set_waiting(self, call_id: str, waiting: bool) -> None:
        """A running call waits for approval (True), or was answered (False: its timer
        starts now)."""
        entry = self.entries.get(call_id)
        if entry is None or entry.status != "running" or entry.waiting == waiting:
            return
        entry.waiting = waiting
        if not waiting:
            entry.started = self.clock()
        self.option_list.replace_option_prompt(call_id, self._prompt(entry))

    def add_note(self, kind: str, name: str, text: str) -> None:
        """A stuck or retry event, shown between the calls (not selectable)."""
        self._notes += 1
        entry = Entry(f"note-{self._notes}", kind, name, text, status=kind)
        self.entries[entry.id] = entry
        self._show()
        self.option_list.add_option(Option(self._prompt(entry), id=entry.id, disabled=True))

    def running(self) -> list[str]:
        """Calls running now (not those waiting for approval)."""
        return [
            e.id
            for e in self.entries.values()
            if e.kind == "call" and e.status == "running" and not e.waiting
        ]

    def tick(self) -> None:
        """Advance the spinner and the live durations of running calls."""
        running = self.running()
        if not running:
            return
        self._frame += 1
        for call_id in running:
            self.option_list.replace_option_prompt(call_id, self._prompt(self.entries[call_id]))

    def clear(self) -> None:
        self.entries.clear()
        self.option_list.clear_options()
        self.option_list.display = False
        self.query_one("#timeline-empty").display = True
        self.border_title = "Tools"

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and event.option.id in self.entries:
            self.post_message(self.Selected(event.option.id))
            if self.entries[event.option.id].extra.get("changes"):
                self.post_message(self.DiffRequested(event.option.id))

"""The blocks a conversation is made of: user and assistant messages, tool calls, notices.

All user, model and tool text is rendered with `markup=False` (or as rich `Text`), so text
such as `[interrupted]` or `[bold]` shows literally.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import events, messages
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from picobot_tui.core.visible import label

from .block_text import (
    NOTICE_ICONS,
    STATUS_ICONS,
    code_blocks,
    format_duration,
    one_line_args,
    status_style,
)
from .markdown_close import close_open_markup
from .streaming import FREEZE_AT, append_delay, settled_prefix
from .textual_compat import drop_cached_placements, stream_content_width
from .typing_monitor import TypingMonitor


class Block(Widget):
    """Base of everything in the transcript: focusable, copyable."""

    can_focus = True
    BINDINGS: ClassVar = [
        Binding("y", "copy", "Copy"),
        Binding("c", "copy_code", "Copy code"),
    ]

    class CopyRequested(Message):
        """Ask the app to put text on the clipboard."""

        def __init__(self, text: str, what: str) -> None:
            super().__init__()
            self.text = text
            self.what = what

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # In the transcript's stream layout, measured at the width it is drawn at.
        return super().get_content_height(container, viewport, stream_content_width(self, width))

    def copy_text(self) -> str:
        return ""

    def rebuild(self) -> Callable[[], Block]:
        """A factory for a new, unmounted copy of this block (its data only, not the
        widget): the conversation unmounts old blocks and builds them again on demand."""
        raise NotImplementedError

    def action_copy(self) -> None:
        self.post_message(self.CopyRequested(self.copy_text(), "message"))

    _code_index = 0

    def action_copy_code(self) -> None:
        blocks = code_blocks(self.copy_text())
        if not blocks:
            self.notify("No code block in this message", severity="warning")
            return
        index = self._code_index % len(blocks)
        self._code_index += 1
        label = f"code block {index + 1}/{len(blocks)}" if len(blocks) > 1 else "code block"
        self.post_message(self.CopyRequested(blocks[index], label))


class UserMessage(Block):
    """What the user sent."""

    def __init__(self, text: str) -> None:
        super().__init__(classes="block user")
        self.source = text

    def render(self) -> Content:
        # The block draws its text itself: one widget per block for every layout pass to
        # walk, not two (bench #7).
        return Content(self.source)

    def copy_text(self) -> str:
        return self.source

    def rebuild(self) -> Callable[[], Block]:
        return partial(UserMessage, self.source)


class AssistantMessage(Block):
    """Model text: streamed into a Static (rich's Markdown, re-rendered on each append, in
    one synchronous update: Textual's Markdown widget mounted its blocks over several loop
    turns, and the layout passes that followed landed on the user's next key, bench #5),
    then drawn by the block itself."""

    def __init__(
        self,
        text: str = "",
        *,
        streaming: bool = True,
        interval: float = 0.08,
        typing: TypingMonitor | None = None,
    ) -> None:
        """`interval`: seconds between appends to the live text (0 = at once); `typing`:
        the user's key presses, which appends wait behind (none: never typing)."""
        super().__init__(classes="block assistant")
        self.interval = interval
        self.typing = typing if typing is not None else TypingMonitor()
        self.source = text
        self.streaming = streaming
        self.interrupted = False
        self._pending: list[str] = []
        self._flush_scheduled = False
        self._held_since: float | None = None  # when a pending append was first held back
        self._live = text  # the part of `source` in the live Static (the rest is frozen)
        self._kept_parts = False  # finished with its frozen parts as children (long answers)

    def compose(self) -> ComposeResult:
        if self.streaming:
            yield Static(self._markdown(self._live), classes="body live")

    @property
    def shown_text(self) -> str:
        """The text on screen so far (appends wait for their flush)."""
        return self.source[: len(self.source) - sum(map(len, self._pending))]

    def render(self) -> RenderableType:
        """Finished, the block draws its markdown itself: one widget per block for every
        layout pass to walk (bench #7). While streaming, its children show the text."""
        if self.streaming or self._kept_parts:
            return ""
        parts: list[RenderableType] = []
        if self.source.strip():
            shown = close_open_markup(self.source) if self.interrupted else self.source
            parts.append(self._markdown(shown))
        if self.interrupted:
            warning = self.app.get_css_variables().get("text-warning", "yellow")
            parts.append(Text("⏹ interrupted", style=f"italic {warning}"))
        return Group(*parts) if len(parts) > 1 else (parts[0] if parts else "")

    def copy_text(self) -> str:
        return self.source

    def rebuild(self) -> Callable[[], Block]:
        return partial(AssistantMessage.restored, self.source, interrupted=self.interrupted)

    @classmethod
    def restored(cls, text: str, *, interrupted: bool = False) -> AssistantMessage:
        """A finished message, as a resumed session shows it."""
        message = cls(text, streaming=False)
        message.interrupted = interrupted
        if interrupted:
            message.add_class("interrupted")
        return message

    def _markdown(self, source: str) -> RenderableType:
        from rich.markdown import Markdown as RichMarkdown

        dark = self.app.current_theme.dark if self.is_attached else True
        return RichMarkdown(source, code_theme="monokai" if dark else "friendly")

    def _frozen(self, text: str) -> Static:
        return Static(self._markdown(text), classes="body frozen")

    async def append(self, text: str) -> None:
        """Add streamed text; appends to the live widget are batched."""
        self.source += text
        self._pending.append(text)
        if self.interval <= 0:
            await self._flush()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(self.interval, self._flush)

    def _key_hold(self) -> float:
        """Seconds to wait before appending (see `append_delay`)."""
        last_key = self.typing.last_key_time
        now = time.monotonic()
        if self._held_since is None:
            self._held_since = now
        since_key = None if last_key is None else now - last_key
        return append_delay(since_key, now - self._held_since, key_painted=self.typing.key_painted)

    async def _flush(self) -> None:
        self._flush_scheduled = False
        if not self._pending or not self.streaming or not self.is_mounted:
            return
        if self.interval > 0 and (wait := self._key_hold()) > 0:
            self._flush_scheduled = True
            self.set_timer(wait, self._flush)
            return
        self._held_since = None
        chunk = "".join(self._pending)
        self._pending.clear()
        self._live += chunk
        live = self.query_one(".live", Static)
        cut = settled_prefix(self._live) if len(self._live) >= FREEZE_AT else 0
        if cut >= FREEZE_AT:
            # The finished blocks move into a Static of their own before the live one.
            done, self._live = self._live[:cut], self._live[cut:]
            part = self._frozen(done)
            part.add_class("part")
            part.styles.margin = (0, 0, 1, 0)  # the blank line between blocks
            await self.mount(part, before=live)
        live.update(self._markdown(self._live))

    async def finish(self, *, interrupted: bool = False) -> None:
        """Stop streaming; the block then draws the whole text itself."""
        self.interrupted = interrupted
        if self.streaming:
            self.streaming = False
            tail = self._live + "".join(self._pending)
            self._pending.clear()
            if self.query(".part"):
                # A long answer: its frozen parts are rendered already; the rest becomes one
                # more part instead of rendering the whole text again (0.3 s of CPU for an
                # 80,000-character answer, bench #4).
                self._kept_parts = True
                live = self.query_one(".live", Static)
                if tail.strip():
                    live.update(self._markdown(close_open_markup(tail) if interrupted else tail))
                else:
                    await live.remove()
            else:
                await self.remove_children()  # the block now renders the whole text itself
        if interrupted:
            self.add_class("interrupted")
            if self._kept_parts:
                await self.mount(Static("⏹ interrupted", classes="interrupted-mark"))
        self.refresh(layout=True)


class ToolBlock(Block):
    """One tool call: a one-line header, and its full arguments and result when expanded."""

    expanded: reactive[bool] = reactive(False)

    BINDINGS: ClassVar = [
        Binding("enter,space", "toggle_expanded", "Expand", show=False),
        Binding("y", "copy", "Copy"),
        Binding("c", "copy_code", "Copy code", show=False),
    ]

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any] | str) -> None:
        super().__init__(classes="block tool -running")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.status = "running"
        self.result = ""
        self.duration_ms: float | None = None
        self.waiting = False  # waiting for the user's approval (set_waiting)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-header")
        with Vertical(classes="tool-body"):
            yield Static(self._args_text(), markup=False, classes="tool-args")
            yield Static(self._result_text(), markup=False, classes="tool-result")

    def _result_text(self) -> str:
        return "" if self.status == "running" else (self.result or "(no output)")

    @classmethod
    def restored(
        cls,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | str,
        status: str,
        result: str,
        duration_ms: float | None,
    ) -> ToolBlock:
        """A finished call, as a resumed session shows it."""
        block = cls(call_id, name, arguments)
        block.finish(status, result, duration_ms)
        return block

    def rebuild(self) -> Callable[[], Block]:
        if self.status == "running":  # never unmounted while running; kept correct anyway
            return partial(ToolBlock, self.call_id, self.tool_name, self.arguments)
        data = (self.call_id, self.tool_name, self.arguments, self.status, self.result)
        return partial(ToolBlock.restored, *data, self.duration_ms)

    def _args_text(self) -> str:
        if isinstance(self.arguments, dict):
            return json.dumps(self.arguments, indent=2, ensure_ascii=False)
        return str(self.arguments)

    def _header(self) -> Content:
        arrow = "▾" if self.expanded else "▸"
        parts: list[str | tuple[str, str]] = [
            (f"{arrow} ", "dim"),
            (f"{STATUS_ICONS.get(self.status, '?')} ", f"bold {status_style(self.status)}"),
            (label(self.tool_name), "bold"),
            "  ",
            (one_line_args(self.arguments), "dim"),
            "  ",
        ]
        if self.status == "running" and self.waiting:
            parts.append(("waiting for approval", "$text-warning"))
        elif self.status == "running":
            parts.append(("running…", status_style("running")))
        else:
            parts.append((self.status, status_style(self.status)))
            if self.duration_ms is not None:
                parts.append((f" · {format_duration(self.duration_ms)}", "dim"))
        return Content.assemble(*parts)

    def _refresh_header(self) -> None:
        if self.is_mounted:
            self.query_one(".tool-header", Static).update(self._header())

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self._refresh_header()
        # The transcript's stream layout reuses each block's cached height unless the block
        # itself is marked for layout, and Textual (8.2) can skip that mark (Screen._on_layout
        # tests the block against the dict of ancestors, not the set) when a child's Layout
        # message is handled first, which happens on a loaded machine: the block then stayed
        # one line high with its body drawn over the blocks below. So drop the parent's
        # cached placements and ask for its layout (and the block's, before its children's).
        if self.is_mounted:
            self.screen.post_message(messages.Layout(self))
            parent = self.parent
            if isinstance(parent, Widget):  # a mounted block's parent is the transcript
                drop_cached_placements(parent)
                parent.refresh(layout=True)

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        if event.widget is not None and "tool-header" in event.widget.classes:
            self.action_toggle_expanded()

    def set_waiting(self, waiting: bool) -> None:
        """The call waits for approval (the header says so), or was answered."""
        if self.status == "running" and self.waiting != waiting:
            self.waiting = waiting
            self.set_class(waiting, "-waiting")
            self._refresh_header()

    def finish(self, status: str, result: str, duration_ms: float | None) -> None:
        self.waiting = False
        self.remove_class("-waiting")
        self.status = status
        self.result = result
        self.duration_ms = duration_ms
        self.remove_class("-running")
        self.add_class(f"-{status}")
        if self.is_mounted:
            self.query_one(".tool-result", Static).update(self._result_text())
        if status == "error":
            self.expanded = True
        self._refresh_header()

    def copy_text(self) -> str:
        return self.result or self._args_text()


class Notice(Block):
    """An out-of-band message: error, retry, stuck, compression, info."""

    def __init__(self, kind: str, text: str, hint: str = "") -> None:
        super().__init__(classes=f"block notice -{kind}")
        self.kind = kind
        self.text = text
        self.hint = hint

    def render(self) -> Content:
        return self._render_text()

    def _render_text(self) -> Content:
        icon = NOTICE_ICONS.get(self.kind, "ℹ")
        parts: list[str | tuple[str, str]] = [(f"{icon} ", "bold"), self.text]
        if self.hint:
            parts += ["\n", (self.hint, "italic")]
        return Content.assemble(*parts)

    def copy_text(self) -> str:
        return f"{self.text}\n{self.hint}".strip()

    def rebuild(self) -> Callable[[], Block]:
        return partial(Notice, self.kind, self.text, self.hint)


class HelpNotice(Notice):
    """`/help`: sections of (key, description) rows as two columns, each description wrapped
    inside its own column (a hanging indent), so a narrow transcript (100 columns with the
    side panes open) never wraps a description back under the keys. `rows` holds
    ("Title:", "") for a section's heading."""

    def __init__(self, rows: tuple[tuple[str, str], ...]) -> None:
        super().__init__("info", help_plain(rows))
        self.rows = rows

    def render(self) -> RenderableType:  # type: ignore[override]
        keys = max((len(k) for k, d in self.rows if d), default=0)
        parts: list[RenderableType] = []
        table: Table | None = None
        for key, what in self.rows:
            if not what:  # a heading: ends the section before it
                if parts:
                    parts.append(Text(""))
                icon = f"{NOTICE_ICONS.get(self.kind, 'ℹ')} " if not parts else ""
                parts.append(Text.assemble((icon, "bold"), (key, "bold")))
                table = Table.grid(padding=(0, 2))
                table.add_column(no_wrap=True, min_width=keys)
                table.add_column(overflow="fold")
                parts.append(Padding(table, (0, 0, 0, 2)))
                continue
            if table is not None:
                table.add_row(Text(key, style="bold"), Text(what))
        return Group(*parts)

    def rebuild(self) -> Callable[[], Block]:
        return partial(HelpNotice, self.rows)


def help_plain(rows: tuple[tuple[str, str], ...]) -> str:
    """The rows as plain text (what `y` copies): headings, then indented `key  what`."""
    keys = max((len(k) for k, d in rows if d), default=0)
    lines: list[str] = []
    for key, what in rows:
        if not what:
            lines += ([""] if lines else []) + [key]
        else:
            lines.append(f"  {key:<{keys}}  {what}")
    return "\n".join(lines)


class SummaryNotice(Notice):
    """The notice of a summarised compaction: Enter (or a click) shows the summary the model
    wrote in place of the dropped messages, so the user can read what the agent now knows."""

    expanded: reactive[bool] = reactive(False)
    BINDINGS: ClassVar = [Binding("enter,space", "toggle_expanded", "Show summary", show=False)]

    def __init__(self, text: str, summary: str) -> None:
        super().__init__("compress", text)
        self.summary = summary

    def _render_text(self) -> Content:
        icon = NOTICE_ICONS.get(self.kind, "ℹ")
        parts: list[str | tuple[str, str]] = [(f"{icon} ", "bold"), self.text]
        if self.expanded:
            parts += ["\n", ("Summary: ", "bold"), self.summary]
        else:
            parts += [("  ▸ enter: read the summary", "dim")]
        return Content.assemble(*parts)

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self.refresh(layout=True)

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        self.action_toggle_expanded()

    def copy_text(self) -> str:
        return f"{self.text}\n\n{self.summary}"

    def rebuild(self) -> Callable[[], Block]:
        return partial(SummaryNotice, self.text, self.summary)

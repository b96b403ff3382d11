"""The conversation pane: a transcript of blocks that follows new output only at the bottom.

API (the app calls these; the pane never reaches into other panes):
`add_user`, `append_text`, `end_text`, `add_tool_call`, `finish_tool_call`, `add_notice`,
`show_call`, `clear`, `last_response`, `load_history`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Static

from picobot_tui.core.textsafe import safe_value, terminal_safe

from .blocks import AssistantMessage, Block, Notice, ToolBlock, UserMessage

RESUME_MESSAGES = 150
"""A resumed session shows its most recent messages only. Every block is a few widgets that
each layout pass walks: showing all 2,000 messages of a long session took 11 s and made
every streamed token cost 1.7x the CPU (bench #6, #7). The session file keeps them all."""


class Transcript(VerticalScroll):
    """The scrolling list of blocks (`layout: stream`). Anchored to the bottom until the user
    scrolls away; scrolling back to the bottom re-anchors it."""

    class FollowChanged(Message):
        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    def _overflows(self, height: int | None = None) -> bool:
        virtual = self.virtual_size.height if height is None else height
        return virtual > self.container_size.height - self.scrollbar_size_horizontal

    def follow(self) -> None:
        """Keep the newest output in view. Textual's anchor bottom-aligns content shorter
        than the view, so the anchor is only set once the content overflows."""
        if self._overflows():
            self.anchor()
        else:
            self.anchor(False)
            self.scroll_to(y=0, animate=False, immediate=True, release_anchor=False)

    def _scroll_update(self, virtual_size: Size) -> None:
        super()._scroll_update(virtual_size)
        if not self.is_anchored and self._overflows(virtual_size.height):
            self.anchor()

    @property
    def following(self) -> bool:
        """True while new output keeps the view at the bottom."""
        return not (self.is_anchored and self._anchor_released)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        was = self.following
        super().watch_scroll_y(old_value, new_value)
        if self.following != was or (not self.following and new_value >= self.max_scroll_y):
            self.post_message(self.FollowChanged(self.following))


class NewOutputHint(Static):
    """Shown while new output arrives below the viewport; click to jump back."""

    class Clicked(Message):
        pass

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked())


class ConversationPane(Vertical):
    """User and assistant messages, tool-call blocks and notices."""

    def __init__(self, *, stream_interval: float = 0.08, id: str | None = None) -> None:
        super().__init__(id=id)
        self.stream_interval = stream_interval
        self._current: AssistantMessage | None = None
        self._calls: dict[str, ToolBlock] = {}
        # Streaming and out-of-band notices (e.g. from the warm-up thread) interleave:
        # every change to the block list goes through this lock.
        self._lock = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield NewOutputHint("↓ new output (End)", id="new-output")

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def hint(self) -> NewOutputHint:
        return self.query_one(NewOutputHint)

    # -- follow / new-output hint -------------------------------------------------------
    def _content_added(self) -> None:
        if not self.transcript.following:
            self.hint.display = True

    def on_transcript_follow_changed(self, message: Transcript.FollowChanged) -> None:
        if message.following:
            self.hint.display = False

    def on_new_output_hint_clicked(self, message: NewOutputHint.Clicked) -> None:
        self.jump_to_end()

    def jump_to_end(self) -> None:
        self.transcript.follow()
        self.hint.display = False

    async def _add_block(self, block: Block) -> Block:
        await self.transcript.mount(block)
        self._content_added()
        return block

    # -- messages ------------------------------------------------------------------------
    async def add_user(self, text: str) -> UserMessage:
        async with self._lock:
            await self._end_text()
            block = UserMessage(text)
            await self._add_block(block)
        self.jump_to_end()  # sending a message always brings the view back down
        return block

    async def append_text(self, text: str) -> None:
        """Stream model text into the current assistant message (creating it if needed)."""
        async with self._lock:
            if self._current is None:
                self._current = AssistantMessage(interval=self.stream_interval)
                await self._add_block(self._current)
            await self._current.append(text)
            self._content_added()

    async def end_text(self, *, interrupted: bool = False) -> AssistantMessage | None:
        """Freeze the current assistant message (marking it interrupted if asked)."""
        async with self._lock:
            return await self._end_text(interrupted=interrupted)

    async def _end_text(self, *, interrupted: bool = False) -> AssistantMessage | None:
        current, self._current = self._current, None
        if current is not None:
            await current.finish(interrupted=interrupted)
        elif interrupted:
            await self._add_block(Notice("interrupted", "interrupted"))
        return current

    @property
    def streaming(self) -> bool:
        return self._current is not None

    # -- tool calls ----------------------------------------------------------------------
    async def add_tool_call(
        self, call_id: str, name: str, arguments: dict[str, Any] | str
    ) -> ToolBlock:
        async with self._lock:
            await self._end_text()
            block = self._calls.get(call_id)
            if block is None:
                block = ToolBlock(call_id, name, arguments)
                self._calls[call_id] = block
                await self._add_block(block)
            return block

    def finish_tool_call(
        self, call_id: str, status: str, result: str, duration_ms: float | None
    ) -> None:
        block = self._calls.get(call_id)
        if block is not None:
            block.finish(status, result, duration_ms)
            self._content_added()

    def tool_block(self, call_id: str) -> ToolBlock | None:
        return self._calls.get(call_id)

    def running_calls(self) -> list[str]:
        return [cid for cid, b in self._calls.items() if b.status == "running"]

    def show_call(self, call_id: str) -> bool:
        """Scroll to a tool call and expand it."""
        block = self._calls.get(call_id)
        if block is None:
            return False
        block.expanded = True
        self.transcript.release_anchor()
        self.transcript.scroll_to_widget(block, animate=False, top=True)
        block.focus()
        return True

    # -- notices and the rest ------------------------------------------------------------
    async def add_notice(self, kind: str, text: str, hint: str = "") -> Notice:
        async with self._lock:
            await self._end_text()
            return await self._add_block(Notice(kind, text, hint))  # type: ignore[return-value]

    async def clear(self) -> None:
        async with self._lock:
            await self._clear()

    async def _clear(self) -> None:
        self._current = None
        self._calls.clear()
        await self.transcript.remove_children()
        self.transcript.anchor(False)
        self.jump_to_end()

    def last_response(self) -> str | None:
        for block in reversed(list(self.transcript.query(AssistantMessage))):
            if block.source.strip():
                return block.source
        return None

    def blocks(self) -> list[Block]:
        return list(self.transcript.query(Block))

    async def load_history(self, messages: Iterable[dict[str, Any]]) -> list[ToolBlock]:
        """Show stored messages (OpenAI format): text, and tool calls with their results."""
        async with self._lock:
            return await self._load_history(messages)

    async def _load_history(self, messages: Iterable[dict[str, Any]]) -> list[ToolBlock]:
        await self._clear()
        widgets: list[Block] = []
        results: dict[str, dict[str, Any]] = {}
        messages = list(messages)
        for m in messages:
            if m.get("role") == "tool" and m.get("tool_call_id"):
                results[m["tool_call_id"]] = m
        start = _recent_start(messages, RESUME_MESSAGES)
        if start:
            hidden = (
                f"{start:,} earlier messages are not shown here; /export writes the whole session."
            )
            widgets.append(Notice("info", hidden))
        calls: list[ToolBlock] = []
        for m in messages[start:]:
            m = safe_value(m)  # stored model text may hold escape sequences
            role = m.get("role")
            content = _text_of(m.get("content"))
            if role == "user":
                widgets.append(UserMessage(content))
            elif role == "assistant":
                if content.strip():
                    msg = AssistantMessage(content, streaming=False)
                    if m.get("interrupted"):
                        msg.add_class("interrupted")
                    widgets.append(msg)
                for call in m.get("tool_calls") or []:
                    fn = call.get("function", {})
                    args: dict[str, Any] | str = fn.get("arguments", "")
                    try:
                        parsed = json.loads(args) if isinstance(args, str) else args
                        if isinstance(parsed, dict):
                            args = safe_value(parsed)  # "\u001b" decodes to a raw ESC
                    except ValueError:
                        pass
                    block = ToolBlock(call.get("id", ""), fn.get("name", "?"), args)
                    res = results.get(call.get("id", ""))
                    if res is not None:
                        status = res.get("status") or (
                            "error" if str(res.get("content", "")).startswith("Error") else "ok"
                        )
                        block.status = status
                        block.result = terminal_safe(_text_of(res.get("content")))
                        block.duration_ms = res.get("duration_ms")
                        block.remove_class("-running")
                        block.add_class(f"-{status}")
                    self._calls[block.call_id] = block
                    calls.append(block)
                    widgets.append(block)
        if widgets:
            await self.transcript.mount_all(widgets)
            for block in calls:
                if block.status != "running":
                    block.finish(block.status, block.result, block.duration_ms)
        self.jump_to_end()
        return calls


def _recent_start(messages: list[dict[str, Any]], keep: int) -> int:
    """Where to start showing `messages` so at most about `keep` are shown, beginning at a
    user message (a tool call is never shown without its turn)."""
    start = max(0, len(messages) - keep)
    while start > 0 and messages[start].get("role") != "user":
        start -= 1
    return start


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)

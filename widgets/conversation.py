"""The conversation pane: a transcript of blocks that follows new output only at the bottom.

API (the app calls these; the pane never reaches into other panes):
`add_user`, `append_text`, `end_text`, `add_tool_call`, `finish_tool_call`, `add_notice`,
`show_call`, `clear`, `last_response`, `load_history`, `show_earlier`.

Only the newest blocks stay mounted (a window of about WINDOW): Textual walks every mounted
widget on each layout pass, and streamed text causes one every 0.15 s, so a long session
would make every token cost more (bench #7). Older blocks are kept as factories and built
again when the user asks for them (the bar at the top of the transcript).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, cast

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Static

from picobot_tui.core import json_input
from picobot_tui.core.content import content_text
from picobot_tui.core.history import is_interrupted_marker
from picobot_tui.core.textsafe import safe_value, terminal_safe

from .blocks import (
    AssistantMessage,
    Block,
    HelpNotice,
    Notice,
    SummaryNotice,
    ToolBlock,
    UserMessage,
)
from .textual_compat import ScrollUpdateHook, anchor_released
from .typing_monitor import TypingMonitor

WINDOW = 30
"""Blocks left mounted after old ones are unmounted, and shown when a session is resumed.
Each mounted block costs every layout pass: at 115 blocks a streamed token cost 1.4x the
CPU of an empty transcript, at 11 blocks 1.1x (bench #7)."""
MAX_MOUNTED = 50
"""Once this many blocks are mounted (and the view follows new output), the oldest are
unmounted back to about WINDOW, from a user message on."""
EARLIER_BATCH = 40
"""Blocks built again per click on the "earlier" bar."""

BlockFactory = Callable[[], Block]


class Transcript(ScrollUpdateHook):
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

    def virtual_size_changed(self, virtual_size: Size) -> None:
        if not self.is_anchored and self._overflows(virtual_size.height):
            self.anchor()

    @property
    def following(self) -> bool:
        """True while new output keeps the view at the bottom."""
        return not (self.is_anchored and anchor_released(self))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        was = self.following
        super().watch_scroll_y(old_value, new_value)
        if self.following != was or (not self.following and new_value >= self.max_scroll_y):
            self.post_message(self.FollowChanged(self.following))


class EarlierHint(Static):
    """The first line of the transcript while older blocks are unmounted: click (or Enter
    when focused) to show more of them."""

    can_focus = True

    class Clicked(Message):
        pass

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked())

    def on_key(self, event: events.Key) -> None:
        if event.key in ("enter", "space"):
            event.stop()
            self.post_message(self.Clicked())


class NewOutputHint(Static):
    """Shown while new output arrives below the viewport; click to jump back."""

    class Clicked(Message):
        pass

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.Clicked())


class ConversationPane(Vertical):
    """User and assistant messages, tool-call blocks and notices."""

    def __init__(
        self,
        *,
        stream_interval: float = 0.08,
        typing: TypingMonitor | None = None,
        id: str | None = None,
    ) -> None:
        """`typing`: the user's key presses, which streamed text waits behind."""
        super().__init__(id=id)
        self.stream_interval = stream_interval
        self.typing = typing if typing is not None else TypingMonitor()
        self._current: AssistantMessage | None = None
        self._calls: dict[str, ToolBlock] = {}
        self._hidden: list[tuple[BlockFactory, str | None]] = []
        """Unmounted blocks, oldest first: a factory, and the tool call id if any."""
        # Streaming and out-of-band notices (e.g. from the warm-up thread) interleave:
        # every change to the block list goes through this lock.
        self._lock = asyncio.Lock()

    def compose(self) -> ComposeResult:
        with Transcript(id="transcript"):
            yield EarlierHint("", id="earlier")
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
        if len(self.transcript.children) > MAX_MOUNTED + 1 and self.transcript.following:
            await self._unmount_oldest()
        return block

    # -- the window of mounted blocks ----------------------------------------------------
    def _mounted_blocks(self) -> list[Block]:
        return [w for w in self.transcript.children if isinstance(w, Block)]

    @property
    def hidden_count(self) -> int:
        """Blocks not mounted (older than those shown)."""
        return len(self._hidden)

    def _update_earlier(self) -> None:
        hint = self.query_one(EarlierHint)
        hint.display = bool(self._hidden)
        if self._hidden:
            n = min(EARLIER_BATCH, len(self._hidden))
            hint.update(f"▲ {len(self._hidden):,} earlier blocks: click to show {n} more")

    async def _unmount_oldest(self) -> None:
        """Unmount old blocks down to about WINDOW, cutting before a user message."""
        blocks = self._mounted_blocks()
        cut = len(blocks) - WINDOW
        while cut < len(blocks) and not isinstance(blocks[cut], UserMessage):
            cut += 1
        if cut <= 0 or cut >= len(blocks) - 1:  # one huge turn: nothing to cut safely
            return
        gone = blocks[:cut]
        for block in gone:
            call_id = block.call_id if isinstance(block, ToolBlock) else None
            self._hidden.append((block.rebuild(), call_id))
            if call_id is not None:
                self._calls.pop(call_id, None)
        await self.transcript.remove_children(gone)
        self._update_earlier()

    async def show_earlier(self, count: int = EARLIER_BATCH) -> list[Block]:
        """Mount up to `count` of the newest unmounted blocks above those shown."""
        async with self._lock:
            return await self._show_earlier(count)

    async def _show_earlier(self, count: int) -> list[Block]:
        if not self._hidden or count <= 0:
            return []
        batch, self._hidden = self._hidden[-count:], self._hidden[:-count]
        blocks = [factory() for factory, _ in batch]
        for block in blocks:
            if isinstance(block, ToolBlock):
                self._calls[block.call_id] = block
        first = next(iter(self._mounted_blocks()), None)
        await self.transcript.mount_all(blocks, after=self.query_one(EarlierHint))
        self._update_earlier()
        if first is not None:  # keep what was the first block where the reader left it
            self.transcript.release_anchor()
            self.transcript.scroll_to_widget(first, animate=False, top=True, immediate=True)
        return blocks

    async def on_earlier_hint_clicked(self, message: EarlierHint.Clicked) -> None:
        await self.show_earlier()

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
                self._current = AssistantMessage(interval=self.stream_interval, typing=self.typing)
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

    async def show_call(self, call_id: str) -> bool:
        """Scroll to a tool call and expand it (mounting older blocks if it is one)."""
        async with self._lock:
            if call_id not in self._calls:
                hidden_at = [i for i, (_, cid) in enumerate(self._hidden) if cid == call_id]
                if hidden_at:
                    await self._show_earlier(len(self._hidden) - hidden_at[-1])
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

    async def add_help(self, rows: tuple[tuple[str, str], ...]) -> Notice:
        """`/help`'s two-column notice (blocks.HelpNotice)."""
        async with self._lock:
            await self._end_text()
            return await self._add_block(HelpNotice(rows))  # type: ignore[return-value]

    async def add_summary_notice(self, text: str, summary: str) -> Notice:
        """A compaction notice that opens to show the summary."""
        async with self._lock:
            await self._end_text()
            return await self._add_block(SummaryNotice(text, summary))  # type: ignore[return-value]

    async def clear(self) -> None:
        async with self._lock:
            await self._clear()

    async def _clear(self) -> None:
        self._current = None
        self._calls.clear()
        self._hidden.clear()
        self._update_earlier()
        await self.transcript.remove_children(self._mounted_blocks())
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
        specs = _history_specs(list(messages))
        start = _window_start(specs, WINDOW)
        self._hidden = specs[:start]
        widgets = [factory() for factory, _ in specs[start:]]
        calls = [w for w in widgets if isinstance(w, ToolBlock)]
        for block in calls:
            self._calls[block.call_id] = block
        if widgets:
            await self.transcript.mount_all(widgets)
        self._update_earlier()
        self.jump_to_end()
        return calls


def _history_specs(messages: list[dict[str, Any]]) -> list[tuple[BlockFactory, str | None]]:
    """A block factory (and tool call id) per block that stored messages show, in order:
    text, and tool calls with their results. No widget is built here."""
    results: dict[str, dict[str, Any]] = {}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id"):
            results[m["tool_call_id"]] = m
    specs: list[tuple[BlockFactory, str | None]] = []
    # A turn interrupted while its tools ran ends on "cancelled" results: it gets the
    # "interrupted" notice it showed live (a partial answer carries its own mark).
    cut = False
    interrupted_notice = (partial(Notice, "interrupted", "interrupted"), None)
    for m in messages:
        role = m.get("role")
        if role == "system" and isinstance(m.get("compaction"), dict):
            specs.append((_compaction_notice(cast(dict[str, Any], safe_value(m))), None))
            continue
        if role not in ("user", "assistant"):
            continue
        if cut:
            specs.append(interrupted_notice)
            cut = False
        m = cast(dict[str, Any], safe_value(m))  # stored model text may hold escape sequences
        content = content_text(m.get("content"))
        if role == "user":
            specs.append((partial(UserMessage, content), None))
            continue
        if content.strip():
            interrupted = bool(m.get("interrupted"))
            specs.append(
                (partial(AssistantMessage.restored, content, interrupted=interrupted), None)
            )
        elif is_interrupted_marker(m):
            specs.append(interrupted_notice)  # interrupted before any text came
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            args: dict[str, Any] | str = fn.get("arguments", "")
            try:
                parsed = json_input.loads(args) if isinstance(args, str) else args
                if isinstance(parsed, dict):
                    args = cast(dict[str, Any], safe_value(parsed))  # "\u001b" decodes to a raw ESC
            except ValueError:
                pass
            call_id = call.get("id", "")
            name = fn.get("name", "?")
            res = results.get(call_id)
            if res is None:
                specs.append((partial(ToolBlock, call_id, name, args), call_id))
                continue
            status = res.get("status") or (
                "error" if str(res.get("content", "")).startswith("Error") else "ok"
            )
            result = terminal_safe(content_text(res.get("content")))
            factory = partial(
                ToolBlock.restored, call_id, name, args, status, result, res.get("duration_ms")
            )
            specs.append((factory, call_id))
            cut = cut or status == "cancelled"
    if cut:
        specs.append(interrupted_notice)
    return specs


def _window_start(specs: list[tuple[BlockFactory, str | None]], keep: int) -> int:
    """Where to start mounting so about `keep` blocks show, beginning at a user message (a
    tool call is never shown without its turn)."""
    start = max(0, len(specs) - keep)
    while start > 0 and _factory_class(specs[start][0]) is not UserMessage:
        start -= 1
    return start


def _compaction_notice(record: dict[str, Any]) -> BlockFactory:
    """Where the context was compacted: a notice that opens to show the summary."""
    from picobot_tui.core.compaction import summary_of

    dropped = record["compaction"].get("dropped")
    text = "History compressed here" + (
        f": {dropped} older messages left the context" if isinstance(dropped, int) else ""
    )
    summary = summary_of(content_text(record.get("content")))
    if summary:
        return partial(SummaryNotice, f"{text}; a summary replaced them.", summary)
    return partial(Notice, "compress", f"{text}.")


def _factory_class(factory: BlockFactory) -> Any:
    return factory.func if isinstance(factory, partial) else None

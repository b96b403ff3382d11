"""The transcript keeps only its newest blocks mounted; older ones come back on demand,
exactly as they were (text, tool status and result, interrupted marks)."""

from __future__ import annotations

import json
from typing import Any

from picobot_tui.widgets.blocks import AssistantMessage, Block, Notice, ToolBlock, UserMessage
from picobot_tui.widgets.conversation import (
    EARLIER_BATCH,
    MAX_MOUNTED,
    WINDOW,
    ConversationPane,
    EarlierHint,
)

from tests.tui.app_support import make_app


def _history(turns: int) -> list[dict[str, Any]]:
    """`turns` turns: a question, a tool call with its result (every third turn failing),
    and an answer (every fifth interrupted)."""
    out: list[dict[str, Any]] = []
    for t in range(turns):
        call = {
            "id": f"call_{t}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{t}.txt"})},
        }
        status = "error" if t % 3 == 0 else "ok"
        out += [
            {"role": "user", "content": f"question {t}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"call_{t}",
                "content": f"result {t}",
                "status": status,
            },
            {"role": "assistant", "content": f"answer {t}", "interrupted": t % 5 == 0},
        ]
    return out


def _describe(block: Block) -> tuple[Any, ...]:
    if isinstance(block, UserMessage):
        return ("user", block.source)
    if isinstance(block, AssistantMessage):
        return ("assistant", block.source, block.has_class("interrupted"))
    if isinstance(block, ToolBlock):
        return ("tool", block.call_id, block.status, block.result, block.expanded)
    assert isinstance(block, Notice)
    return ("notice", block.kind, block.text)


def _expected(turns: int) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for t in range(turns):
        status = "error" if t % 3 == 0 else "ok"
        out += [
            ("user", f"question {t}"),
            ("tool", f"call_{t}", status, f"result {t}", status == "error"),
            ("assistant", f"answer {t}", t % 5 == 0),
        ]
    return out


async def _show_all(pane: ConversationPane) -> None:
    while pane.hidden_count:
        before = pane.hidden_count
        shown = await pane.show_earlier()
        assert len(shown) == min(EARLIER_BATCH, before)


async def test_resume_mounts_the_newest_window_and_the_rest_comes_back_in_order(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.conversation
        calls = await pane.load_history(_history(100))
        blocks = pane.blocks()
        assert WINDOW <= len(blocks) < WINDOW + 3  # from the user message at or before
        assert isinstance(blocks[0], UserMessage)
        assert pane.hidden_count == 300 - len(blocks)
        assert [c.call_id for c in calls] == [b.call_id for b in blocks if isinstance(b, ToolBlock)]
        hint = app.query_one(EarlierHint)
        assert hint.display and f"{pane.hidden_count:,} earlier" in str(hint.render())
        assert [_describe(b) for b in blocks] == _expected(100)[-len(blocks) :]

        pane.transcript.scroll_home(animate=False, immediate=True)  # the bar is at the top
        await pilot.pause()
        assert await pilot.click(EarlierHint)
        await pilot.pause()
        assert len(pane.blocks()) == len(blocks) + EARLIER_BATCH
        await _show_all(pane)
        assert [_describe(b) for b in pane.blocks()] == _expected(100)
        assert not app.query_one(EarlierHint).display


async def test_a_live_conversation_unmounts_old_blocks_and_rebuilds_them_unchanged(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.conversation
        turns = 40  # 120 blocks: more than MAX_MOUNTED
        for t in range(turns):
            await pane.add_user(f"question {t}")
            await pane.add_tool_call(f"call_{t}", "read_file", {"path": f"f{t}.txt"})
            status = "error" if t % 3 == 0 else "ok"
            pane.finish_tool_call(f"call_{t}", status, f"result {t}", 12.0)
            await pane.append_text(f"answer {t}")
            await pane.end_text(interrupted=t % 5 == 0)
            assert len(pane.blocks()) <= MAX_MOUNTED
        await pilot.pause()
        assert pane.hidden_count > 0
        assert isinstance(pane.blocks()[0], UserMessage)
        assert pane.last_response() == f"answer {turns - 1}"
        await _show_all(pane)
        assert [_describe(b) for b in pane.blocks()] == _expected(turns)


async def test_no_blocks_are_unmounted_while_the_reader_is_scrolled_up(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.conversation
        await pane.load_history(_history(30))
        await _show_all(pane)
        await pilot.pause()
        pane.transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert not pane.transcript.following
        mounted = len(pane.blocks())
        await pane.add_notice("info", "something happened")
        assert len(pane.blocks()) == mounted + 1 and pane.hidden_count == 0


async def test_selecting_an_unmounted_call_in_the_timeline_brings_it_back(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.conversation
        await pane.load_history(_history(100))
        assert pane.tool_block("call_3") is None
        assert await pane.show_call("call_3")
        await pilot.pause()
        block = pane.tool_block("call_3")
        assert block is not None and block.expanded and block.has_focus
        assert block.region.y >= 0 and block in pane.blocks()
        assert not await pane.show_call("call_nope")


async def test_clear_forgets_unmounted_blocks(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)):
        pane = app.conversation
        await pane.load_history(_history(100))
        await pane.clear()
        assert pane.blocks() == [] and pane.hidden_count == 0
        assert not app.query_one(EarlierHint).display


async def test_an_interrupted_answer_shows_its_mark_live_and_when_rebuilt(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.conversation
        await pane.append_text("half an ans")
        live = await pane.end_text(interrupted=True)
        assert live is not None
        rebuilt = live.rebuild()()
        await pane.transcript.mount(rebuilt)
        await pilot.pause()
        for block in (live, rebuilt):
            lines = [strip.text for strip in block.render_lines(block.region.reset_offset)]
            text = "\n".join(lines)
            assert "half an ans" in text and "⏹ interrupted" in text
            assert len(block.children) == 0  # one widget: the block draws itself

"""Freezing finished blocks of a long streamed answer (widgets/blocks.py)."""

from __future__ import annotations

import time

import pytest
from picobot_tui.widgets.blocks import AssistantMessage
from picobot_tui.widgets.streaming import (
    AFTER_KEY,
    FREEZE_AT,
    KEY_HOLD_MAX,
    TYPING_PAUSE,
    append_delay,
    settled_prefix,
)
from picobot_tui.widgets.typing_monitor import TypingMonitor
from textual.widgets import Static


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("para one\n\npara two\n", "para one\n\n"),
        ("para one\n\npara two", ""),  # the next line is still arriving
        ("para\n\n", ""),  # what follows the blank line is not known yet
        ("para\n\n```py\nx\n\ny\n", "para\n\n"),  # never inside a fence
        ("a\n\n```py\nx\n\ny\n```\n\nafter\n", "a\n\n```py\nx\n\ny\n```\n\n"),
        ("x\n\n~~~~\n```\n\n~~~~\n\nz\n", "x\n\n~~~~\n```\n\n~~~~\n\n"),
        ("- a\n\n- b\n\ntext\n", "- a\n\n- b\n\n"),  # not between items of one list
        ("1. a\n\n2. b\n", ""),
        ("- a\n\n    more of a\n", ""),  # an indented continuation
    ],
)
def test_settled_prefix(text: str, expected: str) -> None:
    assert text[: settled_prefix(text)] == expected


@pytest.mark.parametrize(
    "since_key, held, painted, expected",
    [
        (None, 0.0, True, 0.0),  # no key yet: at once
        (TYPING_PAUSE + 0.01, 0.0, True, 0.0),  # the user paused: at once
        (0.01, 0.0, True, 0.0),  # just after a key whose frame is painted: now
        (0.01, 0.0, False, 0.003),  # ... but not before that frame
        (AFTER_KEY + 0.01, 0.0, True, 0.005),  # between keys: wait for the next one
        (AFTER_KEY + 0.01, KEY_HOLD_MAX, True, 0.0),  # held long enough: now
    ],
)
def test_append_delay(since_key: float | None, held: float, painted: bool, expected: float) -> None:
    assert append_delay(since_key, held, key_painted=painted) == expected


async def test_streamed_text_waits_for_the_moment_after_a_key() -> None:
    """While keys come, streamed text goes in just after one has been painted (bench #5)."""
    from textual.app import App, ComposeResult

    typing = TypingMonitor()

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield AssistantMessage(interval=0.01, typing=typing)

    app = Host()
    async with app.run_test() as pilot:
        block = app.query_one(AssistantMessage)
        typing.last_key_time = time.monotonic() - AFTER_KEY - 0.01  # typing, between keys
        await block.append("held back")
        for _ in range(5):
            await pilot.pause(0.01)
            typing.last_key_time = time.monotonic() - AFTER_KEY - 0.01
            assert block.shown_text == ""
        typing.last_key_time = time.monotonic()  # a key, painted at once
        await pilot.pause(0.05)
        assert block.shown_text == "held back"
        live = block.query_one(".live", Static)
        assert "held back" in "".join(s.text for s in live.render_lines(live.region.reset_offset))


async def test_long_answers_freeze_finished_blocks_and_the_whole_text_survives() -> None:
    from textual.app import App, ComposeResult

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield AssistantMessage(interval=0)

    paragraphs = [f"Paragraph {i}: " + "words " * 40 + "\n\n" for i in range(30)]
    app = Host()
    async with app.run_test() as pilot:
        block = app.query_one(AssistantMessage)
        for paragraph in paragraphs:
            await block.append(paragraph)
        await pilot.pause()
        parts = block.query(".part")
        assert len(parts) >= 2  # finished blocks moved out of the live Static
        assert len(block._live) < FREEZE_AT + len(paragraphs[0])
        shown = [part.render() for part in block.query(".part")]
        await block.append("the tail, not flushed yet")
        await block.finish()
        await pilot.pause()
        assert block.source == "".join(paragraphs) + "the tail, not flushed yet"
        # The frozen parts stay as they were (not rendered again); the rest is shown too.
        assert [part.render() for part in block.query(".part")] == shown
        text = "\n".join(
            strip.text
            for w in block.query(Static)
            for strip in w.render_lines(w.region.reset_offset)
        )
        assert "Paragraph 0:" in text and "Paragraph 29:" in text and "the tail" in text

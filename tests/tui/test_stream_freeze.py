"""Freezing finished blocks of a long streamed answer (widgets/blocks.py)."""

from __future__ import annotations

import pytest
from picobot_tui.widgets.blocks import settled_prefix


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


async def test_streamed_text_waits_after_a_key_press() -> None:
    """Appends are held back KEY_HOLD after a key (bench #5), and at most ~KEY_HOLD_MAX."""
    import time

    from picobot_tui.widgets.blocks import KEY_HOLD, KEY_HOLD_MAX, AssistantMessage
    from textual.app import App, ComposeResult
    from textual.widgets import Markdown

    class Host(App[None]):
        last_key_time: float | None = None

        def compose(self) -> ComposeResult:
            yield AssistantMessage(interval=0.01)

    app = Host()
    async with app.run_test() as pilot:
        block = app.query_one(AssistantMessage)
        live = block.query_one(Markdown)
        app.last_key_time = time.monotonic()
        await block.append("held back")
        await pilot.pause(KEY_HOLD / 2)
        assert "held back" not in live.source
        await pilot.pause(KEY_HOLD)
        await pilot.pause()
        assert "held back" in live.source

        # Keys that keep coming hold text back for about KEY_HOLD_MAX, not for ever.
        start = time.monotonic()
        await block.append(" more")
        while " more" not in live.source:
            assert time.monotonic() - start < KEY_HOLD_MAX + 1.0
            app.last_key_time = time.monotonic()
            await pilot.pause(0.02)
        assert time.monotonic() - start >= KEY_HOLD_MAX * 0.9

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

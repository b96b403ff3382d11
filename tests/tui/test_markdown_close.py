"""close_open_markup: what a cut answer leaves open is closed; what is not open is untouched."""

from __future__ import annotations

import pytest
from picobot_tui.widgets.markdown_close import close_open_markup

CASES = [
    ("You said: _tell", "You said: _tell_"),
    ("You said: _tell ", "You said: _tell_"),
    ("a **bold", "a **bold**"),
    ("a **b _c", "a **b _c_**"),
    ("~~gone", "~~gone~~"),
    ("x `code", "x `code`"),
    ("x `a` and _b `c", "x `a` and _b `c`_"),
    ("```py\nprint(1)", "```py\nprint(1)\n```"),
    ("one _a_\n\nMore **bo", "one _a_\n\nMore **bo**"),
]
UNTOUCHED = ["done _it_ ok", "* item one\n* item", "snake_case_name", "a * b", "fine *done*", ""]


@pytest.mark.parametrize(("cut", "shown"), CASES)
def test_open_marks_are_closed(cut: str, shown: str) -> None:
    assert close_open_markup(cut) == shown


@pytest.mark.parametrize("text", UNTOUCHED)
def test_balanced_text_is_left_as_it_is(text: str) -> None:
    assert close_open_markup(text) == text

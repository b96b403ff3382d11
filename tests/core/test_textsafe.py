"""The one terminal-escape policy strips everything either of the two policies it replaced
stripped (the regexes below are copied from them as the reference)."""

from __future__ import annotations

import re

import pytest

from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.core.tools.text import sanitize

# The old core/textsafe.py policy.
OLD_TEXTSAFE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# The old core/tools/text.py policy (sanitize).
OLD_TOOLS = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[P^_X][^\x1b]*\x1b\\"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
)
# Both ran this after their escape regex.
OLD_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HOSTILE = [
    "a\x1b[31mred\x1b[0m b",  # CSI colours
    "\x1b[2J\x1b[H\x1b[?1049h cleared",  # erase, home, alt screen
    "\x1b[1;2;3",  # CSI with no final byte
    "\x1b[\x01x",  # malformed CSI
    "t\x1b]0;title\x07x",  # OSC title, BEL
    "t\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\x",  # OSC 8 hyperlink, ST
    "\x1b]52;c;cm0gLXJmIH4=\x07pasted",  # OSC 52 clipboard
    "a\x1b]0;unterminated title",  # OSC to the end
    "a\x1b]0;half\x1b[31mred",  # OSC cut by another sequence
    "a\x1bPq#0;2;0;0;0#0~~\x1b\\b",  # DCS (sixel) with ST
    "a\x1bPunterminated dcs",  # DCS to the end
    "a\x1bXsos\x1b\\b\x1b^pm\x1b\\c\x1b_apc\x1b\\d",  # SOS, PM, APC
    "a\x1b_apc unterminated\x07still",  # APC ended by BEL, which it ignores
    "a\x9b31mb\x9b2Jc",  # 8-bit CSI
    "a\x9d0;title\x9cb\x90dcs\x9cc\x85d",  # C1 controls: 8-bit OSC, DCS, ST, NEL
    "a\x1b(Bb\x1b)0c\x1b#8d",  # charset designation, DEC alignment (intermediates)
    "a\x1b7b\x1b8c\x1bcd\x1bMe\x1b=f\x1b>g",  # save/restore cursor, reset, RI, keypad
    "a\x1b\x1b\x1bb",  # ESC ESC ESC
    "lone ESC at the end\x1b",
    "a\x1b \x1b!b",  # dangling intermediates
    "a\x00b\x07c\x08d\x0be\x0cf\x7fg",  # C0 controls, DEL
    "keep\ttabs\nand newlines, 漢字 ✓",
    "\x1b[31m\x1b]0;x\x07\x1bPp\x1b\\\x9b1m\x1b(B" * 3,
]


def _removed(text: str, escapes: re.Pattern[str]) -> set[int]:
    """Indices of `text` an old policy deleted: its escape regex, then the control regex on
    what was left (mapped back to positions in `text`)."""
    gone = {i for m in escapes.finditer(text) for i in range(m.start(), m.end())}
    left = [i for i in range(len(text)) if i not in gone]
    rest = "".join(text[i] for i in left)
    gone |= {left[m.start()] for m in OLD_CONTROL.finditer(rest)}
    return gone


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


@pytest.mark.parametrize("text", HOSTILE)
def test_strips_all_either_old_policy_stripped(text: str) -> None:
    gone = _removed(text, OLD_TEXTSAFE) | _removed(text, OLD_TOOLS)
    kept_by_both = "".join(ch for i, ch in enumerate(text) if i not in gone)
    out = terminal_safe(text)
    # Only deletes, and deletes at least what either old policy deleted.
    assert _is_subsequence(out, kept_by_both), (out, kept_by_both)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)
    # The tools' sanitize is the same policy (no CR in these strings to tell them apart).
    assert sanitize(text) == out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("t\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\x", "tlinkx"),
        ("a\x1b]0;unterminated title", "a"),
        ("a\x1bPunterminated dcs", "a"),
        ("a\x1b(Bb\x1b7c\x1bcd", "abcd"),
        ("a\x1b[\x01x", "ax"),
        ("keep\ttabs\nand newlines, 漢字 ✓", "keep\ttabs\nand newlines, 漢字 ✓"),
        ("crlf\r\nline", "crlf\nline"),
    ],
)
def test_terminal_safe_outputs(text: str, expected: str) -> None:
    assert terminal_safe(text) == expected


def test_sanitize_keeps_its_cr_handling() -> None:
    # Tool output: a lone CR becomes a line break; terminal_safe (display text) drops it.
    assert sanitize("a\rb\x1b[1mc") == "a\nbc"
    assert terminal_safe("a\rb\x1b[1mc") == "abc"

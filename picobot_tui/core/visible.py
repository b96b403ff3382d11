"""Text for approval previews: every invisible or terminal-active character made visible, and
a cap that says what it left out.

`sanitize`/`terminal_safe` *delete* escapes, which is right for tool output but wrong for a
preview: `echo hello ␛]0;x; touch PWNED; #␇` would be shown as `echo hello`. A preview must show
what will run, so here nothing is deleted or interpreted; each such character becomes a
printable stand-in:

- C0 controls (but \\n and \\t) and DEL -> the Unicode control pictures: ESC ␛, BEL ␇, CR ␍,
  NUL ␀, DEL ␡ ... (one cell wide, so lines keep their shape);
- C1 controls (U+0080-U+009F, e.g. the 8-bit CSI), every format character (Unicode category
  Cf: bidi embeddings/overrides/isolates U+202A-202E and U+2066-2069, zero-width space and
  joiners U+200B-200F, word joiner, BOM, soft hyphen, the invisible TAG characters
  U+E0000-E007F used to smuggle text), the line/paragraph separators U+2028/2029, the
  combining grapheme joiner, the Hangul fillers, variation selectors (which also smuggle
  bytes) and lone surrogates -> `⟨U+202E⟩`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from picobot_tui.core.textsafe import map_strings

_FORMAT_RANGES = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_INVISIBLE_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f" + _FORMAT_RANGES + "\ud800-\udfff]"  # surrogates last
)


def _stand_in(match: re.Match[str]) -> str:
    cp = ord(match.group())
    if cp < 0x20:
        return chr(0x2400 + cp)
    if cp == 0x7F:
        return "\u2421"
    return f"\u27e8U+{cp:04X}\u27e9"


def visible(text: str) -> str:
    """`text` with every control, escape and invisible character shown as a stand-in.

    Keeps \\n and \\t. Idempotent: the output holds none of the characters it replaces.
    """
    return _INVISIBLE_RE.sub(_stand_in, text)


def label(text: object, width: int | None = None, *, exact: bool = False) -> str:
    """A title, label or status string for any front end (an ACP tool-call or permission
    title, a plan entry, a session title, a timeline row, a JSON-RPC error message): on one
    line, with every control and invisible character (Unicode Cc and Cf: ESC, C1, bidi
    embeddings, overrides and isolates, zero-width characters, BOM, …) as its stand-in, so
    a title cannot read differently from what it names. Newlines, tabs and runs of spaces
    become one space; with `width`, cut to that many characters with "…". `exact` is for
    a name (a file path): its spaces are kept, and \\n and \\t are stand-ins (␊ ␉) too.

    The one function every front end builds such strings with; `visible` is its
    multi-line form for text content (previews, tool results), which keeps \\n and \\t.
    """
    raw = text if isinstance(text, str) else str(text)
    if exact:
        flat = visible(raw).replace("\n", "\u240a").replace("\t", "\u2409")
    else:
        flat = " ".join(visible(raw).split())
    if width is not None and len(flat) > width:
        return flat[: max(0, width - 1)] + "…"
    return flat


def visible_value(value: Any) -> Any:
    """`value` with `visible` applied to every string in it (dicts, lists, tuples; keys
    too): a tool call's arguments as a front end shows them raw (ACP `rawInput`)."""
    return map_strings(value, visible)


def has_invisible(text: str) -> bool:
    return _INVISIBLE_RE.search(text) is not None


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def cap_text(text: str, max_lines: int, max_chars: int) -> tuple[str, str]:
    """(what to show, what was left out), the second "" when nothing was.

    Keeps at most `max_lines` lines and `max_chars` characters, cutting at a line end when
    one is near; the shown part ends with a marker line such as
    `… [3,100 more lines (98,000 chars) not shown]`.
    """
    end = len(text)
    pos = -1
    for _ in range(max_lines):
        pos = text.find("\n", pos + 1)
        if pos == -1:
            break
    if pos != -1 and pos + 1 < len(text):
        end = pos + 1
    if end > max_chars:
        nl = text.rfind("\n", 0, max_chars)
        end = nl + 1 if nl >= max_chars // 2 else max_chars
    if end >= len(text):
        return text, ""
    rest = text[end:]
    lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
    chars = _plural(len(rest), "char")
    if text[end - 1] == "\n":
        hidden = f"{_plural(lines, 'more line')} ({chars})"
    elif lines > 1:  # cut inside a line: its rest, then whole lines
        hidden = f"the rest of the last line and {_plural(lines - 1, 'more line')} ({chars})"
    else:
        hidden = f"the rest of the last line ({chars})"
    shown = text[:end].removesuffix("\n")
    return f"{shown}\n… [{hidden} not shown]", hidden


@dataclass(frozen=True)
class Preview:
    """An approval preview: `text` to show (capped, with a marker), `full` (everything), and
    `hidden`, what `text` leaves out ("" when nothing)."""

    text: str
    full: str
    hidden: str = ""

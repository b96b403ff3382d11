"""Text that is safe to show in a terminal (no escape sequences, no stray control bytes) and
to encode (no lone surrogates)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# The one escape policy (tool output, stored messages, anything a front end prints). Strings
# (OSC: titles, hyperlinks, clipboard; DCS/SOS/PM/APC) go to their terminator, or to the next
# ESC or the end when unterminated (a terminal would swallow that text too). Then CSI (colours,
# cursor moves), 8-bit CSI, and every other ESC sequence (intermediates + final byte, e.g.
# `ESC ( B`, `ESC 7`, `ESC c`). A lone ESC and every C0/C1 control except \t and \n go with
# _CONTROL_RE.
_ESCAPES_RE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS/SOS/PM/APC ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x1b[ -/]*[0-~]"  # ESC, intermediates, final byte
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Strip escape sequences and control characters (keeps \\n and \\t; \\r\\n -> \\n)."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _CONTROL_RE.sub("", _ESCAPES_RE.sub("", text))


def decode_output(data: bytes) -> str:
    """Decode process output for display and for the model, never raising."""
    return terminal_safe(data.decode("utf-8", errors="replace"))


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """`value` (JSON-like: dicts, lists, tuples) with `fn` applied to every string in it,
    keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {map_strings(k, fn): map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(v, fn) for v in value)
    return value


def safe_value(value: object) -> object:
    """`value` with terminal_safe applied to every string in it (dicts, lists, tuples), e.g.
    decoded tool-call arguments or a stored message, before a front end renders it."""
    return map_strings(value, terminal_safe)


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD.

    Python decodes undecodable argv bytes (`-m $'caf\\xe9'`) to surrogate escapes, and a
    JSON `"\\udce9"` loads as one. Neither can be encoded as UTF-8, so a provider request
    holding one fails every time: such a session was bricked.
    """
    if _SURROGATE_RE.search(text) is None:
        return text
    # UTF-16 with surrogatepass joins a valid pair into its character; what is left alone
    # becomes U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_strings(value: Any) -> Any:
    """`value` (JSON-like) with `clean_text` applied to every string, keys included."""
    return map_strings(value, clean_text)

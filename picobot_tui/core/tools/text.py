"""Text helpers shared by the tools and the registry: sanitising, truncation, diffs."""

from __future__ import annotations

import difflib

from picobot_tui.core.textsafe import terminal_safe


def sanitize(value: object) -> str:
    """Make any tool output safe to store and to print on a terminal.

    Bytes are decoded as UTF-8 with replacement, lone surrogates are replaced, CRLF and lone
    CR become LF, then `terminal_safe` removes escape sequences and every other control
    character except newline and tab.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        text = bytes(value).decode("utf-8", errors="replace")
    elif isinstance(value, str):
        text = value
    else:
        text = str(value)
    text = text.encode("utf-8", errors="replace").decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return terminal_safe(text)


def truncate(text: str, limit: int) -> str:
    """Keep the first `limit` chars and say how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [truncated: {len(text) - limit} more chars of {len(text)}]"


def _lines(text: str) -> list[str]:
    """Lines split at \\n only, ends kept. `str.splitlines` also splits at \\r, \\x0b, \\x0c,
    \\x1c-\\x1e, \\x85 and U+2028/2029, which would turn one real line into several
    diff lines (a `+` missing on the part after a lone CR)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(old: str, new: str, name: str, max_lines: int | None = None) -> str:
    """A unified diff of two texts. Uncapped by default: approval previews are capped (with a
    marker saying how much is left out) by the registry, after escapes are made visible."""
    if old == new:
        return f"(no changes to {name})"
    lines = list(
        difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{name}", tofile=f"b/{name}")
    )
    # Lines without a final newline would run together.
    lines = [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines]
    if max_lines is not None and len(lines) > max_lines:
        lines = [*lines[:max_lines], f"… [{len(lines) - max_lines:,} more diff lines not shown]\n"]
    return "".join(lines).rstrip("\n")


def encode_utf8(text: str, what: str = "content") -> bytes:
    from picobot_tui.core.tools.base import ToolError

    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ToolError(f"{what} is not valid Unicode text: {e.reason}") from None

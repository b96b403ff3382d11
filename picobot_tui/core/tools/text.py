"""Text helpers shared by the tools and the registry: sanitising, truncation, diffs, and
atomic file writes."""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile
from pathlib import Path

# Escape sequences a terminal would act on: OSC (title, hyperlinks, clipboard), DCS/PM/APC
# strings, CSI (colours, cursor moves), 8-bit CSI, and the remaining two-byte ESC sequences.
_ESCAPES_RE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[P^_X][^\x1b]*\x1b\\"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
)
# Every C0/C1 control character except \t and \n (\r is normalised before this runs).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(value: object) -> str:
    """Make any tool output safe to store and to print on a terminal.

    Bytes are decoded as UTF-8 with replacement, lone surrogates are replaced, CRLF and lone
    CR become LF, ANSI/OSC escape sequences are removed, and so is every other control
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
    text = _ESCAPES_RE.sub("", text)
    return _CONTROL_RE.sub("", text)


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


def _read_umask() -> int:
    # os.umask can only be read by setting it; do that once, at import, not in worker threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory and rename it over `path`.

    A crash leaves either the old file or the new one, never half of it. An existing file
    keeps its permission bits.
    """
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

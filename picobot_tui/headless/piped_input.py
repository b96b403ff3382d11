"""Stdin in a `-m` run: `-m -` reads the message itself from stdin; otherwise piped stdin
(a pipe or a redirected file, never a terminal or `/dev/null`) is attached to the message
as context: `git diff | picobot agent -m "review this"`.

What is attached is named as stdin, text only (NUL bytes refuse it, exit 2, as `read_file`
refuses a binary file), and capped: past `STDIN_MAX_CHARS` its head and tail are kept with
the cut said in between. The session records it through the loop, which masks secrets in
every message it keeps or sends. A pipe is read to its end: a writer that never closes it
keeps picobot waiting, as it keeps `cat` (`</dev/null` attaches nothing).
"""

from __future__ import annotations

import os
import re
import stat
from typing import BinaryIO

from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError

STDIN_MAX_CHARS = 100_000
"""~25,000 tokens: a large diff or log whole, and a runaway pipe cut long before the
context window (read_file pages a file instead; a pipe cannot be paged)."""
READ_MAX_BYTES = 16 * 1024 * 1024
"""Read at most this much (the rest is drained unread, so the writer is not killed by
SIGPIPE): enough to keep the tail of a long log, bounded in memory."""
MESSAGE_FROM_STDIN = "-"


def piped(stdin: BinaryIO) -> bool:
    """Whether stdin is a pipe, a socket or a regular file (not a terminal, not a device)."""
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):  # closed, or no fd at all
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def _read(stdin: BinaryIO) -> tuple[bytes, int]:
    """Up to READ_MAX_BYTES of stdin and its whole size (the rest drained)."""
    data = stdin.read(READ_MAX_BYTES)
    total = len(data)
    while chunk := stdin.read(1 << 20):
        total += len(chunk)
    return data, total


def _text(data: bytes, what: str) -> str:
    if b"\0" in data:
        raise RunError(
            f"{what} looks binary (it has NUL bytes): picobot attaches text only.", EXIT_USAGE
        )
    return data.decode("utf-8", errors="replace")


def _capped(text: str, total_bytes: int, read_bytes: int) -> tuple[str, str]:
    """The text to attach and a note on what was cut ('' when nothing was)."""
    if len(text) <= STDIN_MAX_CHARS and total_bytes == read_bytes:
        return text, ""
    half = STDIN_MAX_CHARS // 2
    head, tail = text[:half], text[-half:] if len(text) > half else ""
    cut = f"[… stdin cut: {total_bytes:,} bytes in all, the first and last {half:,} characters kept …]"
    return f"{head}\n{cut}\n{tail}", f" (cut to {STDIN_MAX_CHARS:,} characters)"


def with_stdin(message: str, stdin: BinaryIO) -> str:
    """The message a `-m` run sends: read from stdin for `-m -`, else `message` with piped
    stdin attached (unchanged when stdin is not piped or is empty). RunError (exit 2) for
    an empty `-m -` or binary input."""
    if message == MESSAGE_FROM_STDIN:
        if not piped(stdin):
            raise RunError(
                "-m - reads the message from stdin, but stdin is not a pipe or a file: "
                "pipe the message in (`echo hi | picobot agent -m -`).",
                EXIT_USAGE,
            )
        data, total = _read(stdin)
        text = _text(data, "the message on stdin")
        if not text.strip():
            raise RunError("the message on stdin is empty.", EXIT_USAGE)
        return _capped(text, total, len(data))[0]
    if not piped(stdin):
        return message
    data, total = _read(stdin)
    if not data:
        return message
    text, cut = _capped(_text(data, "stdin"), total, len(data))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)  # a fence no line of the text can close
    return f"{message}\n\nstdin ({total:,} bytes{cut}):\n{fence}\n{text}\n{fence}"

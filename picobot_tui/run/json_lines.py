"""Newline-delimited JSON on a descriptor: the one input reader of the stdio protocols
(`picobot acp`'s JSON-RPC frames, `picobot agent --json`'s requests).

A daemon thread reads the descriptor with raw `os.read` (a slow or huge line never blocks the
event loop, and no buffered reader holds a lock at interpreter shutdown: a daemon thread
blocked inside a BufferedReader made the interpreter abort at exit, "could not acquire lock
for <stdin>", when a signal ended picobot while stdin was open), splits it into lines, parses
each with the bounds of `core.json_input` (size, nesting, numbers), and hands every line to
the event loop as one `Line`: its value, or what was wrong with it. A line over `max_bytes`
is never held whole: it is dropped as it streams in and reported once. Blank lines are
skipped; the end of input is `None`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from picobot_tui.core import json_input

READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class Line:
    """One input line: `value` when it parsed, else `problem` (why not, one sentence)."""

    value: Any = None
    problem: str | None = None
    too_long: bool = False
    """The line was over the reader's `max_bytes` (and `problem` says so)."""


def parse_line(raw: bytes, max_bytes: int | None = None) -> Line:
    """`raw` (one line, with or without its newline) parsed with the bounds."""
    try:
        return Line(json_input.loads(raw, max_bytes=max_bytes))
    except json_input.JsonInputError as e:
        return Line(problem=str(e), too_long=e.kind == "size")


def split_lines(fd: int, max_bytes: int) -> Iterator[bytes | None]:
    """The lines read from `fd` until EOF or a read error, without their newline; `None` for
    a line longer than `max_bytes` (whose bytes are dropped as they come)."""
    buf = bytearray()
    scanned = 0  # bytes of `buf` known to hold no newline
    discarding = False  # inside a line that was already reported as too long
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n", scanned)
            if nl < 0:
                scanned = len(buf)
                if len(buf) > max_bytes:
                    if not discarding:
                        yield None
                        discarding = True
                    buf.clear()
                    scanned = 0
                break
            line = bytes(buf[:nl])
            del buf[: nl + 1]
            scanned = 0
            if discarding:  # the end of an oversized line
                discarding = False
            elif len(line) > max_bytes:
                yield None
            else:
                yield line
    if buf and not discarding:
        yield bytes(buf)


def read_lines(fd: int, deliver: Callable[[Line | None], None], *, max_bytes: int) -> None:
    """Read, split and parse `fd` until EOF, calling `deliver` with each non-blank `Line`
    and then `None` (in this thread: `start_reader` hands them to the event loop)."""
    too_long = f"a line over {max_bytes:,} bytes"
    for raw in split_lines(fd, max_bytes):
        if raw is None:
            deliver(Line(problem=too_long, too_long=True))
        elif raw.strip():
            deliver(parse_line(raw))
    deliver(None)


def start_reader(
    fd: int,
    loop: asyncio.AbstractEventLoop,
    deliver: Callable[[Line | None], None],
    *,
    max_bytes: int,
    name: str = "stdin-lines",
) -> threading.Thread:
    """`read_lines` in a daemon thread; `deliver` runs on `loop` (once it is gone, the
    lines that are left are dropped)."""

    def on_loop(line: Line | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed already
            loop.call_soon_threadsafe(deliver, line)

    thread = threading.Thread(
        target=read_lines, args=(fd, on_loop), kwargs={"max_bytes": max_bytes}, name=name
    )
    thread.daemon = True
    thread.start()
    return thread

"""A stdio server's stderr: copied to the log line by line, bounded, and its last lines kept.

A server's stderr is the server's to fill: one that wrote 1 MB chunks in a loop made 500 MB
of `picobot.log` in a 15 s turn (issue 21; 305 MB in 5 s measured here). So each server
gets a byte budget in the log (core/log_budget.py: a burst, then a steady rate): what it
writes beyond that is counted, not logged, and a line says how much was left out. Lines are read
with a bounded `readline` (a line with no newline cannot grow in memory) and cut for the
log. The last lines are always kept in memory (`tail`), logged at the end when the budget
had left them out, and shown in the server's error: the lines that say why a server died
are the ones a flood would otherwise push out.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import BinaryIO, TextIO, cast

from picobot_tui.core.log_budget import BURST_BYTES, RATE_BYTES, LogBudget

log = logging.getLogger("picobot.mcp")

LINE_CHARS = 2000
"""Characters of one stderr line kept in the log and the tail."""
_READ_LIMIT = 8192
"""Bytes one read of a line takes; the rest of a longer line is read and dropped."""
TAIL_LINES = 20
"""Last lines of each server kept in memory."""
_RECORD_OVERHEAD = 80
"""Bytes a log line adds to the text (time, level, logger, `[name stderr]`)."""


def _lines(pipe: BinaryIO) -> Iterator[tuple[str, int]]:
    """(line, its size in bytes) for each line of `pipe`, cut to LINE_CHARS."""
    while chunk := pipe.readline(_READ_LIMIT):
        size = len(chunk)
        if not chunk.endswith(b"\n"):  # longer than a read (or the last, unfinished line)
            while more := pipe.readline(_READ_LIMIT):
                size += len(more)
                if more.endswith(b"\n"):
                    break
        text = chunk.decode("utf-8", errors="replace").rstrip("\r\n")
        yield text[:LINE_CHARS], size


class StderrCopy:
    """A pipe for one server process's stderr (`file` is given to the process); a thread
    copies its lines to the log (scrubbed there), so a server's output never reaches the
    screen."""

    def __init__(self, server: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        read_fd, write_fd = os.pipe()
        self.file = cast(TextIO, os.fdopen(write_fd, "w"))
        self._tail: deque[tuple[str, bool, int]] = deque(maxlen=TAIL_LINES)
        self._guard = threading.Lock()
        self._done = threading.Event()
        self._budget = LogBudget(clock)
        self.left_out = [0, 0]
        """Lines and bytes not logged so far (the budget was spent)."""
        self._thread = threading.Thread(
            target=self._copy, args=(read_fd,), name=f"mcp-stderr-{server}", daemon=True
        )
        self._thread.start()

    def _copy(self, fd: int) -> None:
        try:
            with os.fdopen(fd, "rb") as pipe:
                for line, size in _lines(pipe):
                    if line.strip():
                        self._take(line, size)
            self._end()
        except Exception:  # a broken pipe or a log failure: stderr is not worth a crash
            log.exception("MCP server %s: reading its stderr failed", self.server)
        finally:
            self._done.set()

    def _take(self, line: str, size: int) -> None:
        logged = self._budget.take(len(line) + _RECORD_OVERHEAD)
        if logged:
            self._say_left_out()
            log.info("[%s stderr] %s", self.server, line)
        else:
            self.left_out[0] += 1
            self.left_out[1] += size
        with self._guard:
            self._tail.append((line, logged, size))

    def _say_left_out(self) -> None:
        lines, size = self.left_out
        if lines:
            self.left_out = [0, 0]
            log.warning(
                "[%s stderr] … %d lines (%s) not logged: the server writes more than the log "
                "takes from one server (%d KiB/s after %d MiB)",
                self.server,
                lines,
                _size(size),
                RATE_BYTES >> 10,
                BURST_BYTES >> 20,
            )

    def _end(self) -> None:
        """At the end of the stream: the count left out, then the last lines it hid (those
        after the last line logged)."""
        if not self.left_out[0]:
            return
        hidden: list[str] = []
        for line, logged, size in reversed(self.tail_entries()):
            if logged:
                break
            hidden.insert(0, line)
            self.left_out[0] -= 1
            self.left_out[1] -= size
        self._say_left_out()
        for line in hidden:  # past the budget: these say how the server ended
            log.info("[%s stderr] %s", self.server, line)

    def tail_entries(self) -> list[tuple[str, bool, int]]:
        """(line, logged, bytes) of the last lines."""
        with self._guard:
            return list(self._tail)

    def tail(self) -> list[str]:
        """The last lines the server wrote (up to TAIL_LINES), logged or not."""
        return [line for line, _, _ in self.tail_entries()]

    def wait_closed(self, timeout: float) -> bool:
        """Wait (blocking: run it in a thread) until the stream ended and its end was
        logged; False after `timeout` (a child of the server may hold the pipe open)."""
        return self._done.wait(timeout)

    def close(self) -> None:
        """Our copy of the write end: the reader ends when the server's copies close too."""
        if not self.file.closed:
            self.file.close()


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n:,} bytes"

"""`picobot.log`, bounded: rotated at LOG_MAX_BYTES into at most LOG_BACKUPS older files,
safely while several picobot processes (a TUI, `-m` runs, `picobot acp`) write to it.

The stdlib's RotatingFileHandler rotates, but not across processes: each checks the size of
its own open file, so after one process renamed `picobot.log` away the others went on
writing to the renamed file and rotated again early (three writers: files of 2-24 KiB
where 32 KiB were due, and mode 0644). Here every write is made under an `flock` on
`picobot.log.lock`, and before it the handler checks that its open file is still the one
at `picobot.log` (WatchedFileHandler's inode check) and reopens it when another process
has rotated: the size checked is the real size of the one current file, and only one
process rotates at a time. A killed holder frees the lock at once (flock); a stopped one
is waited for only LOCK_WAIT. Each record is also cut at MAX_RECORD_CHARS, so no single
record can carry the files past the bound.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from picobot_tui.core.private_files import open_private
from picobot_tui.core.textsafe import terminal_safe

LOG_MAX_BYTES = 10 << 20
"""Size at which `picobot.log` is rotated (10 MiB: about 80,000 lines of ordinary use)."""
LOG_BACKUPS = 4
"""Rotated files kept (`picobot.log.1` … `.4`): with the current one, 5 files."""
LOCK_WAIT = 0.2
"""Seconds a record waits for the lock: a write holds it for microseconds."""
MAX_RECORD_CHARS = 64 << 10
"""Characters of one record written (a traceback fits; a server's 1 GB line does not)."""


def log_bound() -> int:
    """The most the log folder can hold, in bytes: every file at its limit plus one record
    (a record is checked before it is written), 4-byte characters at worst."""
    return (LOG_BACKUPS + 1) * (LOG_MAX_BYTES + 4 * MAX_RECORD_CHARS)


class _SafeFormatter(logging.Formatter):
    """Records without terminal controls (a server's stderr carried OSC 52, a title, a
    clear-screen into the file and, with --logs, onto the terminal), cut at
    MAX_RECORD_CHARS."""

    def format(self, record: logging.LogRecord) -> str:
        text = terminal_safe(super().format(record))
        if len(text) > MAX_RECORD_CHARS:
            cut = len(text) - MAX_RECORD_CHARS
            text = f"{text[:MAX_RECORD_CHARS]} … ({cut:,} more characters not logged)"
        return text


def log_formatter() -> logging.Formatter:
    return _SafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


class SharedRotatingFileHandler(RotatingFileHandler):
    """A RotatingFileHandler that several processes may share (see the module's note).
    Files are 0600; a file that cannot be written (a full disk) drops the record quietly:
    logging's default prints "--- Logging error ---" and a traceback to stderr for each."""

    def __init__(
        self, path: Path, *, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS
    ) -> None:
        self._lock_fd: int | None = None
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self._lock_path = f"{self.baseFilename}.lock"

    def _open(self) -> Any:
        fd = open_private(Path(self.baseFilename), os.O_CREAT | os.O_APPEND | os.O_WRONLY)
        return open(fd, "a", encoding="utf-8", errors="replace")

    def _lock(self) -> int | None:
        """The lock's fd, held; None when another process kept it for LOCK_WAIT (one
        stopped with Ctrl+Z mid-write): this record is then written without rotating, so a
        stopped picobot cannot stall every other one's logging."""
        if self._lock_fd is None:
            self._lock_fd = open_private(Path(self._lock_path), os.O_CREAT | os.O_RDWR)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self._lock_fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.001)

    def _follow(self) -> None:
        """Reopen when `picobot.log` is no longer the file we hold (another process
        rotated it) or is gone."""
        if self.stream is None:
            return
        try:
            here = os.stat(self.baseFilename)
        except FileNotFoundError:
            here = None
        mine = os.fstat(self.stream.fileno())
        if here is None or (here.st_dev, here.st_ino) != (mine.st_dev, mine.st_ino):
            self.stream.close()
            self.stream = self._open()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fd = self._lock()
        except OSError:
            self.handleError(record)
            return
        try:
            self._follow()
            if fd is None:  # no lock: append, but never rotate (another may be rotating)
                logging.FileHandler.emit(self, record)
            else:
                super().emit(record)  # rollover when due, then the write (and flush)
        except Exception:
            self.handleError(record)
        finally:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def handleError(self, record: logging.LogRecord) -> None:
        pass

    def close(self) -> None:
        super().close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

"""Logging: always to <home>/data/logs/picobot.log (0600), to stderr with --logs, and
always through the secret scrubber."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from picobot_tui.core.private_files import ensure_private_dir

LOGGER = "picobot"
_THIRD_PARTY = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "openai")


class ScrubFilter(logging.Filter):
    """Masks secrets in a record's message, and in its traceback and stack (a provider
    error's text, which may echo keys or headers, is in the exception's message)."""

    def __init__(self, scrub: Callable[[str], str]) -> None:
        super().__init__()
        self.scrub = scrub

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)
        return True


class _QuietFileHandler(logging.FileHandler):
    """A log file that cannot be written (a full disk) drops the record: logging's default
    prints "--- Logging error ---" and a traceback to stderr for every one."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _private_file(path: Path) -> None:
    # Every directory it creates (data/ too, not just logs/) is 0700, whatever the umask.
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)


def setup_logging(log_path: Path, scrub: Callable[[str], str], *, to_stderr: bool) -> None:
    """Route picobot's and LiteLLM's loggers to our file (and stderr with --logs)."""
    handlers: list[logging.Handler] = []
    try:
        _private_file(log_path)
        handlers.append(_QuietFileHandler(log_path, encoding="utf-8"))
    except OSError:
        pass  # a read-only home must not stop the agent
    if to_stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    scrub_filter = ScrubFilter(scrub)
    for handler in handlers:
        handler.setFormatter(fmt)
        handler.addFilter(scrub_filter)
    for name in (LOGGER, *_THIRD_PARTY):
        logger = logging.getLogger(name)
        logger.handlers = list(handlers)
        logger.propagate = False
        logger.setLevel(logging.INFO if to_stderr or name == LOGGER else logging.WARNING)

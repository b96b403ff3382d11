"""Logging: always to <home>/data/logs/picobot.log (0600, rotated: run/log_file.py), to
stderr with --logs, and always through the secret scrubber."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path

from picobot_tui.core.private_files import ensure_private_dir
from picobot_tui.run.log_file import SharedRotatingFileHandler, log_formatter

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


def _masked(handler: logging.Handler, scrub: Callable[[str], str]) -> logging.Handler:
    handler.setFormatter(log_formatter())
    handler.addFilter(ScrubFilter(scrub))
    return handler


def file_handler(log_path: Path, scrub: Callable[[str], str]) -> logging.Handler | None:
    """The log file's handler (bounded, shared safely by several processes, masked); None
    when it cannot be made: a read-only home must not stop the agent."""
    try:
        # Every directory it creates (data/ too, not just logs/) is 0700, whatever the umask.
        ensure_private_dir(log_path.parent)
        handler = SharedRotatingFileHandler(log_path)
    except OSError:
        return None
    return _masked(handler, scrub)


def setup_logging(log_path: Path, scrub: Callable[[str], str], *, to_stderr: bool) -> None:
    """Route picobot's and LiteLLM's loggers to our file (and stderr with --logs)."""
    handlers: list[logging.Handler] = []
    if (to_file := file_handler(log_path, scrub)) is not None:
        handlers.append(to_file)
    if to_stderr:
        handlers.append(_masked(logging.StreamHandler(sys.stderr), scrub))
    for name in (LOGGER, *_THIRD_PARTY):
        logger = logging.getLogger(name)
        logger.handlers = list(handlers)
        logger.propagate = False
        logger.setLevel(logging.INFO if to_stderr or name == LOGGER else logging.WARNING)

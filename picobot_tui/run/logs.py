"""Logging: always to <home>/data/logs/picobot.log (0600, rotated: run/log_file.py), to
stderr with --logs, and always through the secret scrubber."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from picobot_tui.core.log_budget import LogBudget
from picobot_tui.core.private_files import ensure_private_dir
from picobot_tui.run.log_file import SharedRotatingFileHandler, log_formatter

LOGGER = "picobot"
_THIRD_PARTY = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "openai", "mcp")
"""Also routed to our file. The MCP SDK logs every stdout line of a server that is not
JSON-RPC, with a traceback: unrouted, that went to the terminal through logging's last
resort (a traceback per line, unscrubbed, under `-m` and over the TUI)."""
_SERVER_FED = "mcp"
"""The logger whose records a server's output decides: they are logged within a budget."""


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


class ServerFedFilter(logging.Filter):
    """The MCP SDK's records (what a server sent): within a LogBudget per handler, with a
    count of those left out on the next one logged, and without the server's own text in a
    parse error. Pydantic shows a bad line cut in the middle (`'hello...TOKEN-7c1e'`), so a
    secret in it was logged in part, where the scrubber cannot recognise it; the error's
    kind and position say what was wrong. Every other record passes."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.budget = LogBudget(clock)
        self.left_out = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != _SERVER_FED and not record.name.startswith(_SERVER_FED + "."):
            return True
        _without_input(record)
        # A traceback costs about this much once formatted (measured: 1.1-1.6 KB).
        cost = len(record.getMessage()) + (2048 if record.exc_info else 0) + 80
        if not self.budget.take(cost):
            self.left_out += 1
            return False
        if self.left_out:
            record.msg = (
                f"({self.left_out} earlier records of the MCP SDK not logged: more than the "
                f"log takes from it) {record.getMessage()}"
            )
            record.args = None
            self.left_out = 0
        return True


def _without_input(record: logging.LogRecord) -> None:
    """A pydantic ValidationError as one line of its errors' messages, no input value."""
    from pydantic_core import ValidationError

    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, ValidationError):
        what = "; ".join(e["msg"] for e in error.errors(include_url=False, include_input=False))
        record.msg = f"{record.getMessage()}: {what}"
        record.args = record.exc_info = record.exc_text = None


def _masked(handler: logging.Handler, scrub: Callable[[str], str]) -> logging.Handler:
    handler.setFormatter(log_formatter())
    handler.addFilter(ServerFedFilter())  # before the scrubber: a dropped record costs nothing
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

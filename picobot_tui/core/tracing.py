"""Per-turn metrics, one JSON line per turn, in ~/.picobot/data/traces/traces.jsonl.

Tracing must never break a turn: disk errors are logged as warnings, never raised.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from picobot_tui.core.private_files import ensure_private_dir, open_private, write_all

log = logging.getLogger("picobot")

OUTCOMES = ("final", "max_iterations", "budget_exhausted", "error", "cancelled")


@dataclass
class ToolTrace:
    id: str
    name: str
    duration_ms: float
    ok: bool
    status: str  # "ok", "error", "denied", "cancelled", ...


@dataclass
class CallTrace:
    """One model call that reported usage: its prompt (cached parts included), the parts
    read from and written to the provider's cache, its output, and its cost."""

    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float | None = None
    kind: str = "step"  # "step" (the turn's own calls) or "summary" (a compaction's)


@dataclass
class TurnTrace:
    session: str
    turn: int
    model: str
    started: str
    ended: str
    duration_ms: float
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float | None
    tool_calls: list[ToolTrace]
    retries: int
    outcome: str  # one of OUTCOMES
    error: str | None = None
    llm_calls: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: list[CallTrace] = field(default_factory=list)


class Tracer:
    """Appends TurnTrace records to a JSONL file (0600, in 0700 directories)."""

    def __init__(self, path: Path, scrub: Callable[[str], str] | None = None) -> None:
        self.path = Path(path)
        self._scrub = scrub
        self._dir_ready = False

    def record(self, trace: TurnTrace) -> None:
        """Append one line. Never raises."""
        try:
            line = json.dumps(asdict(trace), ensure_ascii=False, default=str)
            if self._scrub is not None:
                line = self._scrub(line)
            data = (line + "\n").encode("utf-8", "backslashreplace")
        except Exception as e:  # a bad field must not end the turn either
            log.warning("could not serialise the trace of turn %s: %s", trace.turn, e)
            return
        try:
            if not self._dir_ready:
                ensure_private_dir(self.path.parent)
                self._dir_ready = True
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                write_all(fd, data)  # one write: concurrent processes don't interleave lines
            finally:
                os.close(fd)
        except OSError as e:
            log.warning("could not write the trace to %s: %s", self.path, e)

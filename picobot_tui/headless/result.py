"""The result object of `-m --output-format json|stream-json`: built from the run's events,
written as one line at the end (headless/protocol.py has its shape)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import IO, Any

from picobot_tui.core.events import (
    ErrorEvent,
    Event,
    ToolCallFinished,
    TurnFinished,
    UsageUpdated,
)
from picobot_tui.core.turn_state import TOO_MANY_FAILURES as STOPPED
from picobot_tui.headless.protocol import (
    ResultOutcome,
    RunResult,
    ToolCallSummary,
    UsageTotals,
    output_line,
)
from picobot_tui.run.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED


@dataclass
class ResultCollector:
    """Adds up a run's events: usage and cost over every model call, the tool calls and
    their outcomes, the last turn's outcome and answer, the first error."""

    started: float = field(default_factory=time.monotonic)
    outcome: ResultOutcome = "error"
    answer: str = ""
    session: str | None = None
    tools: list[ToolCallSummary] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = 0.0
    error: str | None = None
    error_kind: str | None = None

    def add(self, event: Event) -> None:
        if isinstance(event, UsageUpdated):
            u = self.usage
            for name in (
                "prompt_tokens",
                "completion_tokens",
                "total_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
            ):
                u[name] = u.get(name, 0) + getattr(event, name)
            u["model_calls"] = u.get("model_calls", 0) + 1
            u["estimated"] = u.get("estimated", False) or event.estimated
            self.cost = None if self.cost is None or event.cost is None else self.cost + event.cost
        elif isinstance(event, ToolCallFinished):
            self.tools.append(
                ToolCallSummary(event.id, event.name, event.status, round(event.duration_ms, 1))
            )
        elif isinstance(event, ErrorEvent) and (self.error is None or event.kind == STOPPED):
            # The first error says what went wrong; the loop's stop after too many failures
            # in a row says more (what a script must not retry at once).
            self.error, self.error_kind = event.message, event.kind
        elif isinstance(event, TurnFinished):
            self.outcome = event.outcome
            self.session = event.session
            self.answer = event.content if event.outcome == "final" else ""
            if event.outcome in ("max_iterations", "budget_exhausted") and self.error is None:
                self.error = event.content

    def result(
        self,
        exit_code: int,
        *,
        ephemeral: bool = False,
        structured: Any = None,
        invalid: str | None = None,
    ) -> RunResult:
        outcome: ResultOutcome = "invalid_output" if invalid is not None else self.outcome
        if exit_code in (EXIT_INTERRUPTED, EXIT_TERMINATED):  # a signal ended the turn
            outcome = "cancelled"
        return RunResult(
            outcome=outcome,
            exit_code=exit_code,
            answer=self.answer,
            structured=structured,
            session=None if ephemeral else self.session,
            usage=UsageTotals(**self.usage),
            cost=None if self.cost is None else round(self.cost, 10),
            duration_ms=round((time.monotonic() - self.started) * 1000, 1),
            tool_calls=list(self.tools),
            error=invalid if invalid is not None else (None if outcome == "final" else self.error),
            error_kind=None if outcome in ("final", "invalid_output") else self.error_kind,
        )


def write_line(line: str, out: IO[str] | None = None) -> None:
    stream = out or sys.stdout
    stream.write(line + "\n")
    stream.flush()


def print_not_started(message: str, code: int) -> None:
    """A run refused before anything was sent (a usage or config error) still ends the
    json formats' stdout with its result object, for the script reading it."""
    write_line(output_line(RunResult("not_started", code, error=message, error_kind="usage")))

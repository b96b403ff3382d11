"""The loop's bookkeeping: what it keeps per session between turns, what it tracks for the
turn in flight (so cancellation can record what is true)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from picobot_tui.core.budget import TokenEstimator
from picobot_tui.core.tracing import CallTrace, ToolTrace, TurnTrace

STUCK_MESSAGE = (
    "You appear stuck — you just called the same tool with the same arguments. "
    "Try a different approach."
)
CANCELLED_RESULT = "Error: cancelled by user before the tool finished."
TOO_MANY_FAILURES = "too_many_failures"
"""The ErrorEvent kind when maxConsecutiveFailures model calls in a row failed: the agent
takes no queued turn (`--json` exits 1, the library raises until `failures.reset()`); a
message the user sends afterwards (`run_turn(..., user_sent=True)`: the TUI's prompt, an ACP
`session/prompt`) starts afresh."""


@dataclass
class SessionState:
    """What the loop keeps in memory per session between turns."""

    history: list[dict[str, Any]]
    estimator: TokenEstimator = field(default_factory=TokenEstimator)
    allowed_tools: set[str] = field(default_factory=set)
    allowed_hosts: set[str] = field(default_factory=set)  # web_fetch hosts allowed this session
    cost: float | None = None
    turns: int = 0
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    fixed_tokens: int = 0  # estimate of the system prompt + tool schemas of the last call
    call_ids: set[str] = field(default_factory=set)  # every tool-call id used in the session
    skipped: int = 0  # messages the history window left out after its head (core/budget.py)
    prompt_seen: int = 0  # prompt tokens the provider reported this session, cached included
    cache_read: int = 0
    cache_write: int = 0
    saved: float | None = None  # USD the cache saved this session (None: price unknown)
    last_sent: list[dict[str, Any]] = field(default_factory=list)  # the last call's messages


@dataclass
class FailureCounter:
    """Model calls in a row that failed after their retries, across turns and sessions of
    one loop (one process); a successful call resets it. At `limit` the loop stops."""

    limit: int
    count: int = 0
    last_error: str = ""

    @property
    def stopped(self) -> bool:
        return self.count >= self.limit

    def failed(self, message: str) -> None:
        self.count += 1
        self.last_error = message

    def succeeded(self) -> None:
        self.count, self.last_error = 0, ""

    def reset(self) -> None:
        """Start afresh (the loop does for a message the user sends after the stop)."""
        self.succeeded()

    def message(self) -> str:
        return (
            f"Stopped: {self.count} model calls in a row failed after their retries "
            f"(agents.defaults.maxConsecutiveFailures is {self.limit}), so the agent takes no "
            f"more turns. The last error: {self.last_error}"
        )


@dataclass
class TurnState:
    """Mutable bookkeeping of the turn in flight, used for clean cancellation."""

    text: list[str] = field(default_factory=list)
    open_calls: dict[str, str] = field(default_factory=dict)  # id -> name, no result yet
    # id -> when it started (monotonic): after an approval, when it began to run. A call
    # cancelled before its result is traced with the time it took until then.
    call_t0: dict[str, float] = field(default_factory=dict)
    tool_traces: list[ToolTrace] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    retries: int = 0
    llm_calls: int = 0
    secret_calls: set[str] = field(default_factory=set)  # ids refused: args carry a secret
    calls: list[CallTrace] = field(default_factory=list)  # each model call's tokens and cost
    last_call: CallTrace | None = None  # the step's call just made, when it reported usage

    def usage_note(self) -> dict[str, Any]:
        """`{"usage": {...}}` of the call whose answer is being recorded (for the session
        file: `sessions show` prints it; never sent), or {} when it reported none."""
        if self.last_call is None:
            return {}
        call, self.last_call = self.last_call, None
        return {"usage": {k: v for k, v in asdict(call).items() if k != "kind"}}

    started: str = field(default_factory=lambda: now_iso())
    t0: float = field(default_factory=time.monotonic)

    def trace(
        self, session: str, turn: int, model: str, outcome: str, error: str | None
    ) -> TurnTrace:
        """The trace line of this turn."""
        return TurnTrace(
            session=session,
            turn=turn,
            model=model,
            started=self.started,
            ended=now_iso(),
            duration_ms=round((time.monotonic() - self.t0) * 1000, 1),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.prompt_tokens + self.completion_tokens,
            cost=self.cost,
            tool_calls=list(self.tool_traces),
            retries=self.retries,
            outcome=outcome,
            error=error,
            llm_calls=self.llm_calls,
            cache_read_tokens=sum(c.cache_read_tokens for c in self.calls),
            cache_write_tokens=sum(c.cache_write_tokens for c in self.calls),
            calls=list(self.calls),
        )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def fresh_id(base: str, used: set[str]) -> str:
    """`base`, or `base-N` when the session already used it (some local models send
    `call_0` every time), so each id names one call for the UI, approvals and history."""
    new, n = base, 1
    while new in used:
        n += 1
        new = f"{base}-{n}"
    return new


def canonical_call(name: str, args: dict[str, Any] | str) -> str:
    return json.dumps([name, args], sort_keys=True, separators=(",", ":"))

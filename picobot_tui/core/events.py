"""The typed event stream the loop yields. Every front end consumes these, and the JSON
protocol is exactly `event_to_dict(event)` one per line, so the two cannot drift."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Outcome = Literal["final", "max_iterations", "budget_exhausted", "error", "cancelled"]
ToolStatus = Literal["ok", "error", "denied", "cancelled"]


@dataclass(frozen=True)
class TurnStarted:
    session: str
    turn: int
    model: str
    type: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolCallArgsDelta:
    """A tool call forming in the stream (before its arguments are complete)."""

    id: str
    name: str
    delta: str
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True)
class ToolCallStarted:
    id: str
    name: str
    arguments: dict[str, Any] | str
    iteration: int
    max_iterations: int
    type: Literal["tool_call_started"] = "tool_call_started"
    server: str | None = None
    """The MCP server whose tool this is (None for built-in tools)."""


@dataclass(frozen=True)
class ApprovalRequested:
    """A call waiting for the user. `preview` is what to show, with escapes and invisible
    characters made visible and capped with a marker; `hidden` says what it leaves out ("" when
    nothing) and `full` is the whole text ("" from old producers: use `preview`). `scope` is
    what "allow for the session" / "always" cover: the tool, or (web_fetch) the `host`.
    For exec, `rule` is the entry "always" saves: a prefix rule (`exec(git status:*)`, with
    `prefix` "git status") or the exact command (`exec(ls -la)`, `prefix` None); both None
    when no rule could ever match the command (then "always" allows this call only).
    `note` says why the call is asked about although a saved rule starts like it (an option
    the rule does not cover), or that the workspace's saved rules could not be read."""

    id: str
    name: str
    arguments: dict[str, Any]
    preview: str
    full: str = ""
    hidden: str = ""
    scope: Literal["tool", "host"] = "tool"
    host: str | None = None
    prefix: str | None = None
    rule: str | None = None
    note: str = ""
    type: Literal["approval_requested"] = "approval_requested"

    @property
    def whole(self) -> str:
        """The full preview text."""
        return self.full or self.preview


@dataclass(frozen=True)
class ToolCallFinished:
    id: str
    name: str
    ok: bool
    duration_ms: float
    result: str
    status: ToolStatus = "ok"
    type: Literal["tool_call_finished"] = "tool_call_finished"


@dataclass(frozen=True)
class UsageUpdated:
    """One model call's tokens and cost, and the session's. `prompt_tokens` is the whole
    prompt, cached parts included; `cache_read_tokens` / `cache_write_tokens` are parts of
    it, and the hit rates read / prompt (this call, this session). `session_saved` is what
    the cache saved this session in USD against the same calls uncached; `cache_ttl_s` how
    long the prefix this call left in a marked cache stays warm (0: none), and
    `rewrite_cost` what writing it again costs once it went cold (None: unknown)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float | None
    session_cost: float | None
    estimated: bool = False
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    hit_rate: float | None = None
    session_hit_rate: float | None = None
    session_saved: float | None = None
    cache_ttl_s: float = 0.0
    rewrite_cost: float | None = None
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class BudgetChanged:
    estimated_tokens: int
    budget: int
    threshold: int
    type: Literal["budget"] = "budget"


@dataclass(frozen=True)
class HistoryCompressed:
    """The context was compacted. `note` says what happened in one line; `summary` is the
    text the model wrote in place of the dropped messages ("" when they were only dropped:
    `strategy` "drop", by config or because the summary call failed); `extra_tokens` what
    the summary call cost (prompt + completion)."""

    dropped_messages: int
    before_tokens: int
    after_tokens: int
    note: str
    summary: str = ""
    strategy: Literal["summarize", "drop"] = "drop"
    extra_tokens: int = 0
    type: Literal["history_compressed"] = "history_compressed"


@dataclass(frozen=True)
class Retrying:
    attempt: int
    max_retries: int
    delay_s: float
    kind: str
    message: str
    type: Literal["retrying"] = "retrying"


@dataclass(frozen=True)
class StuckDetected:
    name: str
    arguments: dict[str, Any] | str
    message: str
    type: Literal["stuck"] = "stuck"


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    kind: str
    hint: str = ""
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class Notice:
    """Something the user should know that does not stop the turn (e.g. a context file
    left out of the prompt because it links outside the workspace)."""

    kind: str
    message: str
    type: Literal["notice"] = "notice"


@dataclass(frozen=True)
class TurnFinished:
    outcome: Outcome
    content: str
    session: str
    usage: dict[str, Any] = field(default_factory=dict)
    type: Literal["turn_finished"] = "turn_finished"


Event = (
    TurnStarted
    | TextDelta
    | ToolCallArgsDelta
    | ToolCallStarted
    | ApprovalRequested
    | ToolCallFinished
    | UsageUpdated
    | BudgetChanged
    | HistoryCompressed
    | Retrying
    | StuckDetected
    | ErrorEvent
    | Notice
    | TurnFinished
)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON-protocol form of an event (`type` first)."""
    d = asdict(event)
    return {"type": d.pop("type"), **d}

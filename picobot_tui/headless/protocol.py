"""The headless contract's types: what `--json` accepts, and the result object that ends
`-m --output-format json|stream-json`. With the loop's events (core/events.py) they are the
whole protocol; `headless/schema.py` builds the published JSON Schema from these very
classes, so the schema cannot drift from the code.

Every line picobot writes carries `"protocol": PROTOCOL_VERSION`. A client may send it too:
a line naming another version is a `protocol` error. Change a shape here or in
core/events.py and the suite fails until the version is bumped and
docs/protocol-changelog.md says what changed (tests/headless/test_protocol_schema.py).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from picobot_tui.core.approval import Decision
from picobot_tui.core.events import Event, Outcome, ToolStatus, event_to_dict

PROTOCOL_VERSION = 1

Scope = Literal["workspace", "everywhere"]
DECISIONS: tuple[str, ...] = get_args(Decision)
SCOPES: tuple[str, ...] = get_args(Scope)


@dataclass(frozen=True)
class MessageRequest:
    """Run one turn with `content`; `session` switches to that session first (an id or
    `latest`)."""

    content: str
    type: Literal["message"] = "message"
    session: str | None = None
    protocol: int | None = None


@dataclass(frozen=True)
class ApprovalReply:
    """The answer to an `approval_requested` event (`id` is its id). `reason` only with
    "deny"; `scope` only with "always" (workspace by default)."""

    id: str
    decision: Decision
    type: Literal["approval"] = "approval"
    reason: str | None = None
    scope: Scope | None = None
    protocol: int | None = None


Request = MessageRequest | ApprovalReply

ResultOutcome = Outcome | Literal["invalid_output", "not_started"]
"""A turn's outcome, or `invalid_output` (the answer broke --output-schema) or
`not_started` (a usage or config error before anything was sent)."""


@dataclass(frozen=True)
class ToolCallSummary:
    id: str
    name: str
    status: ToolStatus
    duration_ms: float


@dataclass(frozen=True)
class UsageTotals:
    """The run's model calls added up; the cache counts are parts of `prompt_tokens`."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model_calls: int = 0
    estimated: bool = False


@dataclass(frozen=True)
class RunResult:
    """What one `-m` run came to. `answer` is the final text ("" when there is none);
    `structured` the parsed answer under --output-schema (null otherwise); `session` null
    for an --ephemeral run (nothing to resume); `cost` in USD, null when unknown;
    `error` says why a run that did not answer stopped, `error_kind` the kind of its first
    error event (`too_many_failures`, `auth`, `rate_limit`, …; null when none)."""

    outcome: ResultOutcome
    exit_code: int
    answer: str = ""
    structured: Any = None
    session: str | None = None
    usage: UsageTotals = field(default_factory=UsageTotals)
    cost: float | None = None
    duration_ms: float = 0.0
    tool_calls: list[ToolCallSummary] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    type: Literal["result"] = "result"


Output = Event | RunResult


def output_dict(item: Output) -> dict[str, Any]:
    """An output line's object: `type`, then `protocol`, then the fields."""
    d = event_to_dict(item) if not isinstance(item, RunResult) else _result_dict(item)
    return {"type": d.pop("type"), "protocol": PROTOCOL_VERSION, **d}


def _result_dict(result: RunResult) -> dict[str, Any]:
    d = asdict(result)
    return {"type": d.pop("type"), **d}


def output_line(item: Output) -> str:
    """One JSON line as picobot writes it (no newline)."""
    return json.dumps(output_dict(item), ensure_ascii=False)

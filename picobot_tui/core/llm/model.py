"""The interface between the loop and a model: normalised stream chunks and errors.

`core/llm.py` adapts LiteLLM to it; `core/scripted.py` scripts it for tests and the demo.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ToolCallChunk:
    """One fragment of a tool call as streamed. Any field may be missing (None)."""

    index: int | None
    id: str | None
    name: str | None
    arguments: str | None


@dataclass(frozen=True)
class UsageChunk:
    """What the provider reported for a call. `prompt_tokens` is the whole prompt (cached
    parts included); the cache and reasoning fields split it and the output (core/llm/
    usage.py). `saved` is what the cache saved against the same call uncached (negative
    when it only wrote), `rewrite_cost` what this call's cached prefix costs to write
    again once it expires; both None when the price is unknown."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    reasoning: int = 0
    saved: float | None = None
    rewrite_cost: float | None = None
    cache_marked: bool = False
    """The request carried cache markers the provider honours: its prefix is now cached
    for `cache.ttl` from this call."""

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h


@dataclass(frozen=True)
class ResentChunk:
    """The client sent the request to the provider once more on its own (LiteLLM does after
    an HTTP 422 when drop_params is on): one more HTTP request, shown as a retry."""

    reason: str


Chunk = TextChunk | ToolCallChunk | UsageChunk | ResentChunk


class LLMError(Exception):
    """A classified model failure. `transient` errors may be retried by the loop."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        transient: bool,
        status: int | None = None,
        retry_after: float | None = None,
        hint: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.transient = transient
        self.status = status
        self.retry_after = retry_after
        self.hint = hint


@dataclass(frozen=True)
class ModelRequest:
    model: str
    messages: Sequence[dict[str, Any]]
    tools: Sequence[dict[str, Any]]
    max_tokens: int
    temperature: float
    cache_at: tuple[int, ...] = ()
    """Indexes of the messages after which a cached prefix pays (core/cache_plan.py); a
    client whose provider needs explicit markers puts them there, others ignore it.
    Empty: this call's prefix is never sent again, so nothing is written for it."""
    response_format: dict[str, Any] | None = None
    """A JSON Schema the answer must match (`-m --output-schema`), in the OpenAI shape
    `{"type": "json_schema", …}`: a client sends it where the provider has a structured
    output mode, others ignore it (the prompt says it too)."""


class ModelClient(Protocol):
    """Streams one completion as normalised chunks; raises LLMError on failure."""

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]: ...

    def context_window(self, model: str) -> int | None:
        """The model's context window if known (never a network call)."""
        ...

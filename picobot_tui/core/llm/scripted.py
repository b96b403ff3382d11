"""A deterministic in-process model for tests, snapshots and benchmarks.

Each call to `stream()` consumes the next scripted step: a list of chunks to yield (an
Exception in the list is raised at that point), or a callable that builds the step from the
request. Requests are recorded so tests can assert what the model was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from picobot_tui.core.llm.model import (
    Chunk,
    LLMError,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)

Step = Sequence[Chunk | BaseException] | Callable[[ModelRequest], Sequence[Chunk | BaseException]]


def text(*parts: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> list[Chunk]:
    """A step that streams text then reports usage."""
    return [*(TextChunk(p) for p in parts), UsageChunk(prompt_tokens, completion_tokens)]


def tool_call(
    name: str, arguments: dict[str, Any], *, call_id: str = "call_1", index: int = 0
) -> list[Chunk]:
    """A step that streams one tool call, its arguments split across two deltas."""
    raw = json.dumps(arguments)
    half = len(raw) // 2
    return [
        ToolCallChunk(index, call_id, name, raw[:half]),
        ToolCallChunk(index, None, None, raw[half:]),
        UsageChunk(10, 5),
    ]


class ScriptedModel:
    """Replays scripted steps; records every request it receives."""

    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        delay: float = 0.0,
        window: int | None = None,
        default: Step | None = None,
    ) -> None:
        self.steps: list[Step] = list(steps)
        self.requests: list[ModelRequest] = []
        self.delay = delay
        self.window = window
        self.default = default

    def context_window(self, model: str) -> int | None:
        return self.window

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(
            ModelRequest(
                model=request.model,
                messages=json.loads(json.dumps(list(request.messages))),
                tools=list(request.tools),
                max_tokens=request.max_tokens,
                temperature=request.temperature,
            )
        )
        if self.steps:
            step = self.steps.pop(0)
        elif self.default is not None:
            step = self.default
        else:
            raise LLMError("scripted model has no more steps", kind="internal", transient=False)
        items = step(request) if callable(step) else step
        for item in items:
            if isinstance(item, BaseException):
                raise item
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            yield item

"""A scripted step for TUI compaction tests: answers with a fixed text (or a summary when
the loop asks for one), reporting chars/4 of the request as prompt tokens like a provider."""

from __future__ import annotations

import json
from typing import Any

from picobot_tui.core.budget import estimate_messages, estimate_text
from picobot_tui.core.llm.model import ModelRequest, TextChunk, UsageChunk

SUMMARY = "The user sent long messages of repeated words; nothing is open."


def is_summary_call(request: ModelRequest) -> bool:
    last = request.messages[-1]
    return not request.tools and last["role"] == "user" and "summary" in last["content"]


def answering(answer: str, summary: str = SUMMARY) -> Any:
    def step(request: ModelRequest) -> list[Any]:
        raw = estimate_messages(request.messages) + estimate_text(json.dumps(request.tools))
        out = summary if is_summary_call(request) else answer
        return [TextChunk(out), UsageChunk(raw, estimate_text(out))]

    return step

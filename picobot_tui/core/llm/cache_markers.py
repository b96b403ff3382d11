"""The `cache_control` markers of providers that cache only where they are told.

Anthropic (and Claude on Bedrock and Vertex) caches a prompt prefix only up to a block that
carries `cache_control`; OpenAI, DeepSeek and Gemini cache by themselves and get no marker.
The marker goes on the message (LiteLLM moves it onto the message's last content block),
so a message sends the same blocks marked or not: a tool result stays `"content": "…"`
where content parts would have changed its bytes, and with them every later prefix.
picobot places them itself (core/cache_plan.py); LiteLLM's own
`enable_anthropic_prompt_caching` is not used, so there is one mechanism.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MARKED_PREFIXES = ("anthropic/",)
CLAUDE_HOSTS = ("bedrock/", "vertex_ai/", "vertex_ai_beta/")


def needs_markers(model: str, provider: str | None = None) -> bool:
    """Does the provider behind this LiteLLM model string cache only where marked?"""
    lower = model.lower()
    if provider == "anthropic" or lower.startswith(MARKED_PREFIXES):
        return True
    if lower.startswith("claude"):  # a bare Claude name goes to Anthropic
        return True
    return lower.startswith(CLAUDE_HOSTS) and "claude" in lower


def marker(ttl: str) -> dict[str, str]:
    """Anthropic's `cache_control`: 5 minutes is its default, an hour is asked for."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def mark(messages: Sequence[dict[str, Any]], at: Sequence[int], ttl: str) -> list[dict[str, Any]]:
    """`messages` with a marker on each message at `at` (copies of those; the rest are the
    same objects)."""
    out = list(messages)
    for i in at:
        if 0 <= i < len(out):
            out[i] = {**out[i], "cache_control": marker(ttl)}
    return out

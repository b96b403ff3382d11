"""LiteLLM's private names picobot reads (core/llm/litellm_compat.py) still exist.

These run a real LiteLLM stream (its offline `mock_response`), not a mock of our code, so a
LiteLLM release that drops `_hidden_params["response_cost"]` or the stream wrapper's
`chunks` list fails here instead of silently losing costs or trusting made-up usage.
"""

from __future__ import annotations

import asyncio
from typing import Any

from picobot_tui.core.llm.client import load_litellm
from picobot_tui.core.llm.litellm_compat import provider_sent_usage, response_cost


def _stream() -> tuple[Any, list[Any]]:
    litellm = load_litellm()

    async def run() -> tuple[Any, list[Any]]:
        response = await litellm.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
            mock_response="hello",
        )
        return response, [chunk async for chunk in response]

    return asyncio.run(run())


def test_usage_chunk_carries_litellm_cost() -> None:
    _, chunks = _stream()
    usage_chunks = [c for c in chunks if getattr(c, "usage", None)]
    assert usage_chunks, "LiteLLM no longer streams a usage chunk"
    assert isinstance(usage_chunks[-1]._hidden_params, dict)
    cost = response_cost(usage_chunks[-1])
    assert cost is not None and cost > 0, "LiteLLM no longer puts response_cost on the chunk"


def test_stream_wrapper_keeps_raw_chunks() -> None:
    response, _ = _stream()
    # provider_sent_usage falls back to True without this list; check it directly.
    assert isinstance(getattr(response, "chunks", None), list)
    assert provider_sent_usage(response) is False  # the mock provider sends no usage


def test_adapter_without_litellm_fields() -> None:
    assert response_cost(object()) is None
    assert provider_sent_usage(object()) is True

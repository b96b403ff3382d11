"""LiteLLM's private names picobot reads (core/llm/litellm_compat.py) still exist.

These run a real LiteLLM stream (its offline `mock_response`, or the local test server),
not a mock of our code, so a LiteLLM release that drops the response headers from
`_hidden_params["additional_headers"]` or the stream wrapper's `chunks` list fails here
instead of silently losing a proxy's costs or trusting made-up usage.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from picobot_tui.core.llm.client import load_litellm
from picobot_tui.core.llm.litellm_compat import (
    PROXY_COST_HEADER,
    UPSTREAM_COST,
    provider_sent_usage,
    proxy_cost,
)
from tests.support.openai_server import OpenAITestServer, text_reply


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


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_a_proxy_cost_header_reaches_the_usage_chunk(stream: bool) -> None:
    litellm = load_litellm()
    reply = replace(text_reply("hi"), headers=((PROXY_COST_HEADER, "0.0123"),))

    async def run() -> Any:
        response = await litellm.acompletion(
            model="openai/test-model",
            api_base=server.url,
            api_key="sk-test",
            messages=[{"role": "user", "content": "hi"}],
            stream=stream,
            **({"stream_options": {"include_usage": True}} if stream else {}),
        )
        if not stream:
            return response
        return [c async for c in response if getattr(c, "usage", None)][-1]

    with OpenAITestServer([reply]) as server:
        chunk = asyncio.run(run())
    assert proxy_cost(chunk) == 0.0123, "LiteLLM no longer hands on the response headers"


@pytest.mark.parametrize("sent", [0.0421, None], ids=["sent", "none"])
def test_a_streamed_usage_cost_is_the_servers_not_litellms(sent: float | None) -> None:
    """A real LiteLLM Proxy sends no cost header when streaming, only `usage.cost` in the
    last chunk. LiteLLM writes its own bill over `usage.cost` even when the server sent
    none; only the server's figure is a proxy's cost."""
    litellm = load_litellm()
    reply = replace(text_reply("hi"), usage=(3000, 40), cached=2048, usage_cost=sent)

    async def run() -> Any:
        response = await litellm.acompletion(
            model="openai/gpt-4o-mini",
            api_base=server.url,
            api_key="sk-test",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        return [c async for c in response if getattr(c, "usage", None)][-1]

    with OpenAITestServer([reply]) as server:
        chunk = asyncio.run(run())
    assert proxy_cost(chunk) == sent, "LiteLLM no longer keeps the server's usage.cost apart"
    if sent is None:  # the case the private name tells apart: LiteLLM's bill is there
        assert chunk.usage.cost > 0


def test_stream_wrapper_keeps_raw_chunks() -> None:
    response, _ = _stream()
    # provider_sent_usage falls back to True without this list; check it directly.
    assert isinstance(getattr(response, "chunks", None), list)
    assert provider_sent_usage(response) is False  # the mock provider sends no usage


def test_adapter_without_litellm_fields() -> None:
    assert proxy_cost(object()) is None
    for bad in ("nan", "-1", "inf", "x", None):
        assert proxy_cost(_Hidden({"llm_provider-" + PROXY_COST_HEADER: bad})) is None
        assert proxy_cost(_Hidden({}, upstream=bad)) is None
    assert proxy_cost(_Hidden({}, upstream=True)) is None
    assert provider_sent_usage(object()) is True


class _Hidden:
    def __init__(self, headers: dict[str, Any], upstream: Any = None) -> None:
        self._hidden_params = {"additional_headers": headers, UPSTREAM_COST: upstream}

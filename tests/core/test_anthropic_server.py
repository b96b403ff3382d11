"""The local Anthropic Messages API server: its cache rules over raw HTTP, and LiteLLM's
anthropic provider against it (streaming and not), which is what it exists to speak."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.support.anthropic_server import (
    AnthropicTestServer,
    block_tokens,
    prompt_blocks,
)
from tests.support.openai_server import error, text_reply, tool_call_reply

MARK = {"type": "ephemeral"}
LONG = "x" * 8000  # 2,000+ tokens: over the minimum cacheable prompt


@pytest.fixture
def server():
    with AnthropicTestServer() as s:
        yield s


def _body(*user: str, system: Any = None, stream: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 10,
        "system": system if system is not None else [{"type": "text", "text": LONG}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": u}]} for u in user],
        "stream": stream,
        **extra,
    }


def _post(server: AnthropicTestServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.url}/v1/messages", json=body, timeout=10)


def _marked_system(ttl: str | None = None) -> list[dict[str, Any]]:
    mark = {**MARK, "ttl": ttl} if ttl else MARK
    return [{"type": "text", "text": LONG, "cache_control": mark}]


def test_a_marked_prefix_is_written_then_read_within_its_ttl_only(server):
    body = _body("hello", system=_marked_system())
    sys_tokens = block_tokens({"system": {"type": "text", "text": LONG}})
    first = _post(server, body).json()["usage"]
    assert first["cache_creation_input_tokens"] == sys_tokens
    assert first["cache_creation"] == {
        "ephemeral_5m_input_tokens": sys_tokens,
        "ephemeral_1h_input_tokens": 0,
    }
    assert first["cache_read_input_tokens"] == 0
    second = _post(server, body).json()["usage"]
    assert second["cache_read_input_tokens"] == sys_tokens
    assert second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] == first["input_tokens"]  # the message, uncached
    server.advance(299)  # a read refreshed it: 299 s after the read it is still warm
    assert _post(server, body).json()["usage"]["cache_read_input_tokens"] == sys_tokens
    server.advance(301)
    expired = _post(server, body).json()["usage"]
    assert expired["cache_read_input_tokens"] == 0
    assert expired["cache_creation_input_tokens"] == sys_tokens


def test_one_hour_breakpoints_outlive_five_minutes_and_are_split_out(server):
    body = _body("hello", system=_marked_system("1h"))
    assert _post(server, body).json()["usage"]["cache_creation"]["ephemeral_1h_input_tokens"]
    server.advance(3000)
    assert _post(server, body).json()["usage"]["cache_read_input_tokens"] > 0


def test_without_a_marker_nothing_is_cached(server):
    for _ in range(2):
        usage = _post(server, _body("hello")).json()["usage"]
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0


def test_a_prefix_under_the_minimum_is_not_written(server):
    short = [{"type": "text", "text": "short", "cache_control": MARK}]
    for _ in range(2):
        usage = _post(server, _body("hi", system=short)).json()["usage"]
        assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0


def test_a_moved_breakpoint_reads_the_earlier_prefix_and_writes_the_rest(server):
    def marked(*texts: str) -> dict[str, Any]:
        body = _body(*texts, system=_marked_system())
        body["messages"][-1]["content"][-1]["cache_control"] = MARK
        return body

    first = _post(server, marked("one")).json()["usage"]
    second = _post(server, marked("one", "two")).json()["usage"]
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == block_tokens(
        {"user": {"type": "text", "text": "two"}}
    )
    assert second["input_tokens"] == 0
    # A changed early message breaks every later prefix: only the system prompt is read.
    third = _post(server, marked("ONE", "two")).json()["usage"]
    assert third["cache_read_input_tokens"] == block_tokens(
        {"system": {"type": "text", "text": LONG}}
    )


@pytest.mark.parametrize(
    ("system", "message"),
    [
        ([{"type": "text", "text": str(i), "cache_control": MARK} for i in range(5)], "maximum"),
        (
            [
                {"type": "text", "text": "a", "cache_control": MARK},
                {"type": "text", "text": "b", "cache_control": {**MARK, "ttl": "1h"}},
            ],
            "must not come after",
        ),
        ([{"type": "text", "text": "a", "cache_control": {**MARK, "ttl": "2h"}}], "ttl"),
    ],
)
def test_requests_anthropic_refuses_get_its_400(server, system, message):
    resp = _post(server, _body("hi", system=system))
    assert resp.status_code == 400
    assert message in resp.json()["error"]["message"]
    assert server.usages == []


def test_prompt_blocks_are_tools_then_system_then_messages():
    body = _body("u", system="s", tools=[{"name": "t", "input_schema": {}}])
    assert [next(iter(b.item)) for b in prompt_blocks(body)] == ["tool", "system", "user"]


# -- through LiteLLM ------------------------------------------------------------------------


def _litellm_call(server: AnthropicTestServer, stream: bool) -> Any:
    import litellm

    async def call() -> Any:
        response = await litellm.acompletion(
            model="anthropic/claude-sonnet-4-5",
            api_base=server.url,
            api_key="sk-ant-test",
            stream=stream,
            **({"stream_options": {"include_usage": True}} if stream else {}),
            max_tokens=50,
            messages=[
                {
                    "role": "system",
                    "content": [{"type": "text", "text": LONG, "cache_control": MARK}],
                },
                {"role": "user", "content": "read a.txt"},
            ],
            tools=[
                {
                    "type": "function",
                    "function": {"name": "read_file", "parameters": {"type": "object"}},
                }
            ],
        )
        if not stream:
            return response, response.usage
        text, calls, usage = "", [], None
        async for chunk in response:
            if getattr(chunk, "usage", None):
                usage = chunk.usage
            if chunk.choices:
                delta = chunk.choices[0].delta
                text += delta.content or ""
                calls += delta.tool_calls or []
        return (text, calls), usage

    return asyncio.run(call())


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_litellm_reads_text_tool_calls_and_cache_usage(server, stream):
    server.script([tool_call_reply("read_file", {"path": "a.txt"}, text="Reading."), text_reply()])
    got, usage = _litellm_call(server, stream)
    body = server.completions[-1].body
    assert server.completions[-1].path == "/v1/messages"
    assert body["system"][0]["cache_control"] == MARK
    assert body.get("stream", False) is stream
    if stream:
        text, calls = got
        assert text == "Reading."
        args = "".join(c.function.arguments or "" for c in calls)
        assert json.loads(args) == {"path": "a.txt"}
    else:
        message = got.choices[0].message
        assert message.content == "Reading."
        assert json.loads(message.tool_calls[0].function.arguments) == {"path": "a.txt"}
    sent = server.usages[-1]
    assert usage.cache_creation_input_tokens == sent["cache_creation_input_tokens"] > 0
    _, usage = _litellm_call(server, stream)
    assert usage.prompt_tokens_details.cached_tokens == server.usages[-1]["cache_read_input_tokens"]
    assert usage.prompt_tokens_details.cached_tokens == sent["cache_creation_input_tokens"]


def test_litellm_sees_a_scripted_error_as_anthropic_sends_it(server):
    import litellm

    server.script([error(429)])
    with pytest.raises(litellm.RateLimitError):
        _litellm_call(server, True)

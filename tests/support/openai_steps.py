"""Scripted steps of the OpenAI-compatible test server: replies, faults, and how they
are rendered as OpenAI JSON / SSE frames. `openai_server` re-exports all of it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

# -- steps ----------------------------------------------------------------------------------

Frame = dict[str, Any] | str
"""One SSE event: a dict is sent as `data: <json>`, a str is sent verbatim after `data: `."""


@dataclass(frozen=True)
class Reply:
    """A successful completion, streamed as deltas or sent whole when `stream` is false."""

    deltas: tuple[dict[str, Any], ...]
    """The `choices[0].delta` of each content chunk, in order."""
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = (10, 5)
    """(prompt, completion) tokens; None = the provider sends no usage."""
    delay: float = 0.0
    """Seconds to wait before each SSE chunk."""
    first_byte_delay: float = 0.0
    """Seconds to wait before sending the response headers."""
    cut_after: int | None = None
    """Close the connection abruptly after this many SSE chunks."""
    inject: tuple[tuple[int, Frame], ...] = ()
    """Extra frames (position, frame) inserted before the content chunk at that position."""
    done: bool = True
    """Send `data: [DONE]` at the end."""
    stall_after: int | None = None
    """After this many SSE chunks, send only `: keep-alive` comments (every `delay` s, or
    0.1 s) until the client goes away: a provider that hangs but keeps the socket busy."""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra response headers (e.g. a LiteLLM Proxy's `x-litellm-response-cost`)."""
    cached: int | None = None
    """`usage.prompt_tokens_details.cached_tokens` (OpenAI's automatic prompt cache)."""
    usage_cost: float | None = None
    """`usage.cost` (USD): what a LiteLLM Proxy (or OpenRouter) says the call cost."""


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with an OpenAI-style JSON body."""

    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Reset:
    """Read the request, then reset the connection without answering."""


Step = Reply | ErrorReply | Reset | Callable[[dict[str, Any]], "Reply | ErrorReply | Reset"]
"""A step, or a function of the request body returning one (e.g. reply to tool results)."""


def _chunk_text(text: str, chunk_size: int) -> list[str]:
    size = max(1, chunk_size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text_reply(
    text: str = "Hello from the test server.",
    *,
    chunk_size: int = 8,
    usage: tuple[int, int] | None = (10, 5),
) -> Reply:
    """Stream `text` in `chunk_size`-character deltas, then usage (when requested)."""
    parts = _chunk_text(text, chunk_size)
    deltas = [{"role": "assistant", "content": parts[0]}] + [{"content": p} for p in parts[1:]]
    return Reply(tuple(deltas), "stop", usage)


@dataclass(frozen=True)
class ToolCall:
    """One tool call to stream; `args` may be a dict (JSON-encoded) or a raw string."""

    name: str
    args: dict[str, Any] | str
    id: str | None = None

    @property
    def raw_args(self) -> str:
        return self.args if isinstance(self.args, str) else json.dumps(self.args)


def _split(raw: str, parts: int) -> list[str]:
    parts = max(1, min(parts, len(raw) or 1))
    step = -(-len(raw) // parts) if raw else 1
    return [raw[i : i + step] for i in range(0, len(raw), step)] or [""]


def tool_calls_reply(
    calls: Sequence[ToolCall],
    *,
    parts: int = 3,
    text: str | None = None,
    omit_index: bool = False,
    omit_id: bool = False,
    interleave: bool = False,
    usage: tuple[int, int] | None = (10, 5),
) -> Reply:
    """Stream parallel tool calls, each one's arguments split into `parts` deltas.

    `omit_index`: no `index` on any delta (Groq style: a new id starts a new call).
    `omit_id`: no `id` at all (older Ollama/llama.cpp). `interleave`: round-robin the
    calls' argument deltas (needs indexes to be reassembled).
    """
    deltas: list[dict[str, Any]] = []
    if text:
        deltas.append({"role": "assistant", "content": text})
    per_call: list[list[dict[str, Any]]] = []
    for i, call in enumerate(calls):
        frags = _split(call.raw_args, parts)
        items = []
        for j, frag in enumerate(frags):
            tc: dict[str, Any] = {}
            if not omit_index:
                tc["index"] = i
            if j == 0:
                if not omit_id:
                    tc["id"] = call.id or f"call_{i + 1}"
                tc["type"] = "function"
                tc["function"] = {"name": call.name, "arguments": frag}
            else:
                tc["function"] = {"arguments": frag}
            items.append({"tool_calls": [tc]})
        per_call.append(items)
    if interleave:
        longest = max((len(p) for p in per_call), default=0)
        ordered = [p[k] for k in range(longest) for p in per_call if k < len(p)]
    else:
        ordered = [d for p in per_call for d in p]
    if ordered and not text:
        ordered[0] = {"role": "assistant", "content": None, **ordered[0]}
    deltas.extend(ordered)
    return Reply(tuple(deltas), "tool_calls", usage)


def tool_call_reply(
    name: str,
    args: dict[str, Any] | str,
    *,
    id: str | None = "call_1",
    parts: int = 3,
    text: str | None = None,
    omit_index: bool = False,
    omit_id: bool = False,
    usage: tuple[int, int] | None = (10, 5),
) -> Reply:
    """Stream one tool call with its arguments split into `parts` deltas."""
    return tool_calls_reply(
        [ToolCall(name, args, id)],
        parts=parts,
        text=text,
        omit_index=omit_index,
        omit_id=omit_id,
        usage=usage,
    )


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    code: str | None = None,
    body: dict[str, Any] | str | None = None,
    headers: dict[str, str] | None = None,
) -> ErrorReply:
    """An HTTP error. Without `body`, an OpenAI-style `{"error": {...}}` is built."""
    if body is None:
        body = {
            "error": {
                "message": message or _DEFAULT_ERRORS.get(status, f"HTTP {status}"),
                "type": type or _DEFAULT_TYPES.get(status, "api_error"),
                "param": None,
                "code": code,
            }
        }
    return ErrorReply(status, body, dict(headers or {}))


_DEFAULT_ERRORS = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    404: "The model `test-model` does not exist or you do not have access to it.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    529: "Overloaded",
}
_DEFAULT_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    529: "overloaded_error",
}


def rate_limited(retry_after: str | None = "1") -> ErrorReply:
    """429, with a Retry-After header unless `retry_after` is None."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return error(429, code="rate_limit_exceeded", headers=headers)


def overloaded() -> ErrorReply:
    """529 "Overloaded", as Anthropic-style providers send it."""
    return error(529, type="overloaded_error")


def context_window_exceeded(limit: int = 8192, sent: int = 9000) -> ErrorReply:
    """400 with code `context_length_exceeded`, worded as OpenAI sends it."""
    return error(
        400,
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {sent} tokens. Please reduce the length of the messages.",
        type="invalid_request_error",
        code="context_length_exceeded",
    )


def reset_before_response() -> Reset:
    return Reset()


def cut_mid_stream(after_chunks: int = 2, step: Reply | None = None) -> Reply:
    """`step` (default: a text reply), with the connection dropped after N chunks."""
    base = step or text_reply("This answer will be cut off in the middle.", chunk_size=4)
    return replace(base, cut_after=after_chunks)


def malformed_chunk(step: Reply | None = None, *, at: int = 1, raw: str | None = None) -> Reply:
    """`step` (default: a text reply) with an invalid JSON chunk before content chunk `at`."""
    base = step or text_reply("Before and after a broken chunk.", chunk_size=8)
    frame = raw if raw is not None else '{"id": "chatcmpl-broken", "choices": [{"delta": {"content'
    return replace(base, inject=(*base.inject, (at, frame)))


def empty_choices(step: Reply | None = None, *, count: int = 1) -> Reply:
    """Chunks with `choices: []` (and no usage) before `step`'s chunks.

    Without `step`, the whole response is empty: no content, no tool call, just usage.
    """
    frames = tuple((0, {"choices": []}) for _ in range(count))
    if step is None:
        return Reply((), "stop", (10, 0), inject=frames)
    return replace(step, inject=(*frames, *step.inject))


def keep_alive_forever(after_chunks: int = 1, step: Reply | None = None) -> Reply:
    """`step` (default: a text reply) that stops after N chunks and then sends SSE comment
    lines (`: keep-alive`) forever: only a whole-call idle timeout ends it."""
    base = step or text_reply("This answer stops and the stream only pings.", chunk_size=4)
    return replace(base, stall_after=after_chunks)


def slow(delay_per_chunk: float, step: Reply | None = None, *, first_byte: float = 0.0) -> Reply:
    """`step` (default: a text reply) with a pause before every chunk / the headers."""
    base = step or text_reply()
    return replace(base, delay=delay_per_chunk, first_byte_delay=first_byte)


DEFAULT_MARKDOWN = """\
## Test answer

This is a **scripted** answer from the local test server.

- one
- two

```python
print("hello")
```
"""


def step_from_json(obj: dict[str, Any]) -> Reply | ErrorReply | Reset:
    """Build a step from a JSON object (the CLI's `--script` format), e.g.
    `{"type": "text", "text": "hi"}`, `{"type": "tool_call", "name": "x", "args": {}}`,
    `{"type": "tool_calls", "calls": [{"name": ..., "args": ..., "id": ...}]}`,
    `{"type": "error", "status": 429, "headers": {"Retry-After": "1"}}`,
    `{"type": "context_window"}`, `{"type": "reset"}`,
    `{"type": "cut", "after_chunks": 2, "step": {...}}`, `{"type": "malformed", "step": ...}`,
    `{"type": "empty_choices"}`, `{"type": "slow", "delay": 0.05, "step": {...}}`.
    """
    kind = obj.get("type", "text")
    inner = step_from_json(obj["step"]) if isinstance(obj.get("step"), dict) else None
    if inner is not None and not isinstance(inner, Reply):
        raise ValueError(f"step {kind!r} wraps a reply, not {type(inner).__name__}")
    usage = tuple(obj["usage"]) if obj.get("usage") else (10, 5)
    if kind == "text":
        text = obj.get("text", DEFAULT_MARKDOWN)
        return text_reply(text, chunk_size=obj.get("chunk_size", 8), usage=usage)  # type: ignore[arg-type]
    if kind == "tool_call":
        return tool_call_reply(
            obj["name"], obj.get("args", {}), id=obj.get("id", "call_1"), parts=obj.get("parts", 3)
        )
    if kind == "tool_calls":
        calls = [ToolCall(c["name"], c.get("args", {}), c.get("id")) for c in obj["calls"]]
        return tool_calls_reply(calls, parts=obj.get("parts", 3), text=obj.get("text"))
    if kind == "error":
        return error(
            obj["status"], obj.get("message"), code=obj.get("code"), headers=obj.get("headers")
        )
    if kind == "context_window":
        return context_window_exceeded()
    if kind == "reset":
        return Reset()
    if kind == "cut":
        return cut_mid_stream(obj.get("after_chunks", 2), inner)
    if kind == "malformed":
        return malformed_chunk(inner)
    if kind == "empty_choices":
        return empty_choices(inner)
    if kind == "slow":
        return slow(obj.get("delay", 0.05), inner, first_byte=obj.get("first_byte", 0.0))
    raise ValueError(f"unknown step type {kind!r}")


# -- rendering ------------------------------------------------------------------------------


def merge_message(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The whole assistant message a stream of deltas adds up to (for stream=false)."""
    content = ""
    has_content = False
    calls: list[dict[str, Any]] = []
    for delta in deltas:
        if delta.get("content"):
            content += delta["content"]
            has_content = True
        for tc in delta.get("tool_calls") or []:
            fn = tc.get("function") or {}
            idx = tc.get("index")
            new = (idx is not None and idx >= len(calls)) or (
                idx is None and (tc.get("id") or not calls)
            )
            if new:
                calls.append(
                    {
                        "id": tc.get("id") or f"call_{len(calls) + 1}",
                        "type": "function",
                        "function": {"name": "", "arguments": ""},
                    }
                )
            target = calls[idx] if idx is not None else calls[-1]
            target["function"]["name"] += fn.get("name") or ""
            target["function"]["arguments"] += fn.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": content if has_content else None}
    if calls:
        message["tool_calls"] = calls
    return message


def usage_dict(
    usage: tuple[int, int], cached: int | None = None, cost: float | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prompt_tokens": usage[0],
        "completion_tokens": usage[1],
        "total_tokens": sum(usage),
    }
    if cached is not None:  # OpenAI counts cached tokens inside prompt_tokens
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    if cost is not None:
        out["cost"] = cost
    return out


def stream_frames(reply: Reply, model: str, include_usage: bool) -> Iterator[Frame]:
    """Every SSE frame of a streamed reply, in order (without [DONE])."""
    base = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }
    inject: dict[int, list[Frame]] = {}
    for pos, frame in reply.inject:
        inject.setdefault(pos, []).append(frame)
    for i, delta in enumerate(reply.deltas):
        yield from inject.pop(i, [])
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    for frames in inject.values():
        yield from frames
    if reply.deltas:
        yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
    if include_usage and reply.usage is not None:
        yield {
            **base,
            "choices": [],
            "usage": usage_dict(reply.usage, reply.cached, reply.usage_cost),
        }

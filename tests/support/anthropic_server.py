"""A real Anthropic Messages API server for tests and benchmarks, with prompt caching.

It speaks `POST /v1/messages` as LiteLLM's `anthropic/` provider sends it to `api_base`
(streaming SSE and whole JSON), answers from the same scripted steps as
`tests/support/openai_server.py` (a `Reply`'s OpenAI-shaped deltas become text and
`tool_use` blocks), and caches as the real one does:

- the prompt is the tools, then the system blocks, then every message's content blocks;
  a block carrying `cache_control` is a breakpoint (at most four, a `1h` one never after a
  `5m` one, or HTTP 400 as Anthropic answers);
- at each breakpoint, and up to 20 blocks before it, the server looks for a prefix it wrote
  within its TTL (5 minutes or an hour, refreshed by every read): the longest one found is
  read; from there to each later breakpoint is written (each stretch at its breakpoint's
  TTL), unless the prefix is shorter than `min_tokens` (1,024, as for Sonnet);
- usage says `input_tokens` (after the last breakpoint, or not cached),
  `cache_read_input_tokens`, `cache_creation_input_tokens` and `cache_creation`'s
  `ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`.

A block costs ceil(len(canonical JSON) / 4) tokens, so a test can predict the figures. The
clock is the server's own: `advance(seconds)` moves it (a cache expires without a sleep).

    with AnthropicTestServer() as server:
        server.script([tool_call_reply("read_file", {"path": "a.txt"}), text_reply("done")])
        ... model "anthropic/claude-sonnet-4-5", api_base=server.url ...
        assert server.usages[1]["cache_read_input_tokens"] > 0
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import (
    ErrorReply,
    OpenAITestServer,
    ReceivedRequest,
    Reply,
    Reset,
    Step,
    _Handler,
    text_reply,
)

MAX_BREAKPOINTS = 4
LOOKBACK = 20  # blocks before a breakpoint where Anthropic still finds an earlier hit
TTLS = {"5m": 300.0, "1h": 3600.0}
MIN_TOKENS = 1024  # Anthropic's minimum cacheable prompt for Sonnet and Opus


def block_tokens(item: Any) -> int:
    """What one prompt block counts for: chars/4 of its canonical JSON."""
    return -(-len(_canonical(item)) // 4)


def _canonical(item: Any) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_marker(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


@dataclass(frozen=True)
class Block:
    """One cacheable unit of the prompt, as the cache sees it."""

    item: Any
    """What identifies it: its kind (tool, system, the message's role) and the block."""
    tokens: int
    ttl: str | None
    """The breakpoint's TTL, or None when the block carries no `cache_control`."""


class CacheError(ValueError):
    """A request Anthropic refuses with HTTP 400 (`invalid_request_error`)."""


def prompt_blocks(body: dict[str, Any]) -> list[Block]:
    """The request's prompt in cache order: tools, system, messages."""
    out: list[Block] = []

    def add(kind: str, block: Any) -> None:
        ttl: str | None = None
        if isinstance(block, dict) and isinstance(block.get("cache_control"), dict):
            marker = block["cache_control"]
            if marker.get("type") != "ephemeral":
                raise CacheError(f"cache_control.type must be 'ephemeral', not {marker!r}")
            ttl = str(marker.get("ttl", "5m"))
            if ttl not in TTLS:
                raise CacheError(f"cache_control.ttl must be '5m' or '1h', not {ttl!r}")
        item = {kind: _without_marker(block)}
        out.append(Block(item, block_tokens(item), ttl))

    for tool in body.get("tools") or ():
        add("tool", tool)
    system = body.get("system")
    if isinstance(system, str):
        add("system", {"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add("system", block)
    for message in body.get("messages") or ():
        content = message.get("content")
        role = str(message.get("role"))
        if isinstance(content, str):
            add(role, {"type": "text", "text": content})
        else:
            for block in content or ():
                add(role, block)
    marks = [b.ttl for b in out if b.ttl is not None]
    if len(marks) > MAX_BREAKPOINTS:
        raise CacheError(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
    if "1h" in marks and "5m" in marks[: marks.index("1h")]:
        raise CacheError(
            "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
        )
    return out


@dataclass(frozen=True)
class CacheUse:
    """What one request read, wrote and sent uncached."""

    input_tokens: int
    read: int
    written_5m: int
    written_1h: int

    @property
    def written(self) -> int:
        return self.written_5m + self.written_1h

    def usage(self, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.written,
            "cache_read_input_tokens": self.read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.written_5m,
                "ephemeral_1h_input_tokens": self.written_1h,
            },
            "output_tokens": output_tokens,
        }


@dataclass
class PromptCache:
    """Anthropic's prompt cache: prefixes written at breakpoints, each alive for its TTL
    from its last use."""

    clock: Callable[[], float]
    min_tokens: int = MIN_TOKENS
    entries: dict[str, tuple[float, str]] = field(default_factory=dict)
    """prefix hash -> (expiry on the clock, TTL)."""

    def use(self, model: str, blocks: Sequence[Block]) -> CacheUse:
        now = self.clock()
        hashes: list[str] = []
        totals: list[int] = []
        digest = hashlib.sha256(model.encode())
        total = 0
        for block in blocks:
            digest.update(_canonical(block.item).encode())
            hashes.append(digest.copy().hexdigest())
            total += block.tokens
            totals.append(total)
        marks = [i for i, b in enumerate(blocks) if b.ttl is not None]
        hit = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                entry = self.entries.get(hashes[i])
                if entry is not None and entry[0] > now:
                    hit = max(hit, i)
                    break
        for i in range(hit + 1):  # a read refreshes what it used
            entry = self.entries.get(hashes[i])
            if entry is not None and entry[0] > now:
                self.entries[hashes[i]] = (now + TTLS[entry[1]], entry[1])
        read = totals[hit] if hit >= 0 else 0
        done, written = read, {"5m": 0, "1h": 0}
        for mark in marks:
            if mark <= hit or totals[mark] < self.min_tokens:
                continue
            ttl = blocks[mark].ttl or "5m"
            self.entries[hashes[mark]] = (now + TTLS[ttl], ttl)
            written[ttl] += totals[mark] - done
            done = totals[mark]
        return CacheUse(total - done, read, written["5m"], written["1h"])


# -- the wire -------------------------------------------------------------------------------


def _blocks_of(reply: Reply) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(event, block index, payload) for each piece of a reply: `start` a block (text or
    tool_use), `delta` of text or of a tool's JSON input."""
    index = -1
    kind = ""
    tools: dict[int, int] = {}  # OpenAI tool-call index -> block index
    for delta in reply.deltas:
        if delta.get("content"):
            if kind != "text":
                index += 1
                kind = "text"
                yield "start", index, {"type": "text", "text": ""}
            yield "delta", index, {"type": "text_delta", "text": delta["content"]}
        for n, call in enumerate(delta.get("tool_calls") or ()):
            fn = call.get("function") or {}
            key = call.get("index", n)
            if call.get("id") or fn.get("name") or key not in tools:
                index += 1
                kind = "tool"
                tools[key] = index
                start = {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_{index}",
                    "name": fn.get("name") or "",
                    "input": {},
                }
                yield "start", index, start
            if fn.get("arguments"):
                json_delta = {"type": "input_json_delta", "partial_json": fn["arguments"]}
                yield "delta", tools[key], json_delta


def _stop_reason(reply: Reply) -> str:
    if any(d.get("tool_calls") for d in reply.deltas):
        return "tool_use"
    return "max_tokens" if reply.finish_reason == "length" else "end_turn"


def _whole_content(reply: Reply) -> list[dict[str, Any]]:
    blocks: dict[int, dict[str, Any]] = {}
    args: dict[int, str] = {}
    for event, index, payload in _blocks_of(reply):
        if event == "start":
            blocks[index] = dict(payload)
        elif payload["type"] == "text_delta":
            blocks[index]["text"] += payload["text"]
        else:
            args[index] = args.get(index, "") + payload["partial_json"]
    for index, raw in args.items():
        blocks[index]["input"] = json.loads(raw or "{}")
    return [blocks[i] for i in sorted(blocks)]


def _error_body(step: ErrorReply) -> dict[str, Any]:
    """An Anthropic-shaped error from an OpenAI-shaped scripted one."""
    inner = step.body.get("error") if isinstance(step.body, dict) else None
    inner = inner if isinstance(inner, dict) else {}
    return {
        "type": "error",
        "error": {
            "type": inner.get("type") or "api_error",
            "message": inner.get("message") or str(step.body or f"HTTP {step.status}"),
        },
    }


class _AnthropicHandler(_Handler):
    server: Any

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.server.record(ReceivedRequest("POST", self.path, self._headers(), body))
        if self.path.split("?")[0].rstrip("/") != "/v1/messages":
            self._send_json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
            )
            return
        request = body if isinstance(body, dict) else {}
        owner: AnthropicTestServer = self.server.owner
        try:
            use = owner._use_cache(request)
        except CacheError as e:
            bad = {"type": "invalid_request_error", "message": str(e)}
            self._send_json(400, {"type": "error", "error": bad})
            return
        step = self.server.next_step(request)
        if isinstance(step, Reset):
            self._reset()
        elif isinstance(step, ErrorReply):
            self._send_json(step.status, _error_body(step), step.headers)
        else:
            usage = use.usage(step.usage[1] if step.usage else 5)
            owner._used(usage)
            if request.get("stream"):
                self._stream_messages(step, request, usage)
            else:
                self._whole_message(step, request, usage)

    def _whole_message(self, reply: Reply, request: dict[str, Any], usage: dict[str, Any]) -> None:
        if not self._wait(reply.first_byte_delay) or reply.cut_after is not None:
            return self._reset()
        payload = {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-test"),
            "content": _whole_content(reply),
            "stop_reason": _stop_reason(reply),
            "stop_sequence": None,
            "usage": usage,
        }
        self._send_json(200, payload)

    def _frames(
        self, reply: Reply, request: dict[str, Any], usage: dict[str, Any]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        start_usage = {**usage, "output_tokens": 1}
        message = {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-test"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        yield "message_start", {"type": "message_start", "message": message}
        open_block: int | None = None
        for event, index, payload in _blocks_of(reply):
            if event == "start":
                if open_block is not None:
                    yield "content_block_stop", {"type": "content_block_stop", "index": open_block}
                open_block = index
                start = {"type": "content_block_start", "index": index, "content_block": payload}
                yield "content_block_start", start
            else:
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": payload,
                    },
                )
        if open_block is not None:
            yield "content_block_stop", {"type": "content_block_stop", "index": open_block}
        delta = {"stop_reason": _stop_reason(reply), "stop_sequence": None}
        final = {"output_tokens": usage["output_tokens"]}
        yield "message_delta", {"type": "message_delta", "delta": delta, "usage": final}
        yield "message_stop", {"type": "message_stop"}

    def _stream_messages(
        self, reply: Reply, request: dict[str, Any], usage: dict[str, Any]
    ) -> None:
        if not self._wait(reply.first_byte_delay):
            return self._reset()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for sent, (event, data) in enumerate(self._frames(reply, request, usage)):
                if reply.cut_after is not None and sent >= reply.cut_after:
                    return self._reset()
                if not self._wait(reply.delay):
                    return self._reset()
                self._chunk(f"event: {event}\ndata: {json.dumps(data)}\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (cancelled)


class AnthropicTestServer(OpenAITestServer):
    """Local Anthropic Messages API server with a prompt cache; give LiteLLM `url` as the
    `api_base` of an `anthropic/...` model."""

    handler = _AnthropicHandler

    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        default: Step | None = None,
        port: int = 0,
        min_tokens: int = MIN_TOKENS,
    ) -> None:
        super().__init__(steps, default=default or text_reply("Hello from Anthropic."), port=port)
        self._offset = 0.0
        self._cache_lock = threading.Lock()
        self.cache = PromptCache(lambda: time.monotonic() + self._offset, min_tokens)
        self._usages: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`: LiteLLM adds `/v1/messages` itself."""
        return self.base_url

    def advance(self, seconds: float) -> None:
        """Move the cache's clock on (entries expire as if that much time passed)."""
        with self._cache_lock:
            self._offset += seconds

    def _use_cache(self, request: dict[str, Any]) -> CacheUse:
        with self._cache_lock:
            return self.cache.use(str(request.get("model")), prompt_blocks(request))

    def _used(self, usage: dict[str, Any]) -> None:
        with self._cache_lock:
            self._usages.append(usage)

    @property
    def usages(self) -> list[dict[str, Any]]:
        """The usage each successful request was answered with, oldest first."""
        with self._cache_lock:
            return list(self._usages)

    @property
    def completions(self) -> list[ReceivedRequest]:
        """Only the Messages API requests."""
        return [r for r in self.requests if r.method == "POST" and "messages" in r.path]

    def clear(self) -> None:
        """Forget the requests and usages (the cache stays: it is the provider's)."""
        super().clear()
        with self._cache_lock:
            self._usages.clear()

    def flush_cache(self) -> None:
        with self._cache_lock:
            self.cache.entries.clear()

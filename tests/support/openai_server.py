"""A real OpenAI-compatible HTTP server for tests and benchmarks (stdlib only).

It listens on 127.0.0.1 (port 0 = any free port) in a daemon thread and answers
`POST /v1/chat/completions` (and `/chat/completions`) from a FIFO script of steps, falling
back to a default step when the script is empty. `GET /v1/models` lists one model.

    with OpenAITestServer() as server:
        server.script([tool_call_reply("read_file", {"path": "a.txt"}), text_reply("done")])
        ... point LiteLLM at model "openai/test-model", api_base=server.url ...
        assert server.requests[0].body["stream_options"] == {"include_usage": True}

Streams are real SSE over chunked HTTP/1.1, so a cut mid-stream is seen by the client as
a truncated body (not a clean end). Faults: `error()`, `reset_before_response()`,
`cut_mid_stream()`, `malformed_chunk()`, `empty_choices()`, `slow()`.

CLI (for tmux tests and benchmarks): `python -m tests.support.openai_server --port 0
[--script steps.json]` prints its URL on the first line and serves until interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def _merge_message(deltas: Sequence[dict[str, Any]]) -> dict[str, Any]:
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


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


def _stream_frames(reply: Reply, model: str, include_usage: bool) -> Iterator[Frame]:
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
        yield {**base, "choices": [], "usage": _usage(reply.usage)}


# -- server ---------------------------------------------------------------------------------


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access logs
        pass

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    # -- plumbing ---------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _reset(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0) and no response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _wait(self, seconds: float) -> bool:
        """Sleep; False when the server is stopping."""
        return not (seconds > 0 and self.server.stopping.wait(seconds))

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # -- routes -----------------------------------------------------------------------
    def do_GET(self) -> None:
        self.server.record(ReceivedRequest("GET", self.path, self._headers(), None))
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": "test-model",
                            "object": "model",
                            "created": 0,
                            "owned_by": "picobot-tests",
                        }
                    ],
                },
            )
        else:
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.server.record(ReceivedRequest("POST", self.path, self._headers(), body))
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )
            return
        request = body if isinstance(body, dict) else {}
        step = self.server.next_step(request)
        if isinstance(step, Reset):
            self._reset()
        elif isinstance(step, ErrorReply):
            self._send_json(step.status, step.body if step.body is not None else "", step.headers)
        elif request.get("stream"):
            self._stream(step, request)
        else:
            self._whole(step, request)

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _whole(self, reply: Reply, request: dict[str, Any]) -> None:
        if not self._wait(reply.first_byte_delay):
            return self._reset()
        if reply.cut_after is not None:
            return self._reset()
        payload = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": _merge_message(reply.deltas),
                    "finish_reason": reply.finish_reason,
                }
            ],
        }
        if reply.usage is not None:
            payload["usage"] = _usage(reply.usage)
        self._send_json(200, payload)

    def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
        if not self._wait(reply.first_byte_delay):
            return self._reset()
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        frames = _stream_frames(reply, str(request.get("model", "test-model")), include_usage)
        try:
            for sent, frame in enumerate(frames):
                if reply.cut_after is not None and sent >= reply.cut_after:
                    return self._reset()
                if not self._wait(reply.delay):
                    return self._reset()
                data = frame if isinstance(frame, str) else json.dumps(frame)
                self._chunk(f"data: {data}\n\n")
            if reply.done:
                self._chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (cancelled); nothing to do


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: OpenAITestServer, address: tuple[str, int]) -> None:
        self.owner = owner
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._conns_lock:
            (self._conns.add if alive else self._conns.discard)(conn)

    def close_all(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def record(self, req: ReceivedRequest) -> None:
        self.owner._record(req)

    def next_step(self, request: dict[str, Any]) -> Reply | ErrorReply | Reset:
        return self.owner._next_step(request)


class OpenAITestServer:
    """Local OpenAI-compatible server; use as a context manager or start()/stop()."""

    def __init__(
        self, steps: Sequence[Step] = (), *, default: Step | None = None, port: int = 0
    ) -> None:
        self._lock = threading.Lock()
        self._steps: list[Step] = list(steps)
        self._requests: list[ReceivedRequest] = []
        self.default: Step = (
            default if default is not None else text_reply("Hello from the test server.")
        )
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> OpenAITestServer:
        if self._server is None:
            self._server = _Server(self, ("127.0.0.1", self._port))
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="openai-test-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        server.close_all()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (no /v1)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT/v1`: the api_base to give LiteLLM."""
        return f"{self.base_url}/v1"

    # -- script -----------------------------------------------------------------------
    def script(self, steps: Sequence[Step]) -> None:
        """Replace the pending steps."""
        with self._lock:
            self._steps = list(steps)

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._steps)

    def _next_step(self, request: dict[str, Any]) -> Reply | ErrorReply | Reset:
        with self._lock:
            step = self._steps.pop(0) if self._steps else self.default
        return step(request) if callable(step) else step

    # -- requests ---------------------------------------------------------------------
    def _record(self, req: ReceivedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far (a copy), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def completions(self) -> list[ReceivedRequest]:
        """Only the chat-completion requests."""
        return [r for r in self.requests if r.method == "POST" and "completions" in r.path]

    @property
    def last_body(self) -> Any:
        reqs = self.completions
        return reqs[-1].body if reqs else None

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


# -- CLI ------------------------------------------------------------------------------------


def _load_script(path: str) -> tuple[list[Step], Step | None]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):
        return [step_from_json(s) for s in data], None
    steps = [step_from_json(s) for s in data.get("steps", [])]
    default = step_from_json(data["default"]) if data.get("default") else None
    return steps, default


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Local OpenAI-compatible test server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--script", help='JSON file: a list of steps, or {"steps": [...], "default": {...}}'
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds before each chunk of the default reply"
    )
    args = parser.parse_args(argv)
    steps: list[Step] = []
    default: Step | None = None
    if args.script:
        steps, default = _load_script(args.script)
    if default is None:
        default = text_reply(DEFAULT_MARKDOWN, chunk_size=6)
    if args.delay and isinstance(default, Reply):
        default = replace(default, delay=args.delay)
    server = OpenAITestServer(steps, default=default, port=args.port).start()
    print(server.url, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.openai_steps import (  # noqa: F401  (re-exported)
    DEFAULT_MARKDOWN,
    ErrorReply,
    Frame,
    Reply,
    Reset,
    Step,
    ToolCall,
    context_window_exceeded,
    cut_mid_stream,
    empty_choices,
    error,
    keep_alive_forever,
    malformed_chunk,
    merge_message,
    overloaded,
    rate_limited,
    reset_before_response,
    slow,
    step_from_json,
    stream_frames,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
    usage_dict,
)

# -- server ---------------------------------------------------------------------------------

MODELS = ("test-model", "bench-model")
"""The models the server lists by default: every name the suite (and bench/, whose model is
`openai/bench-model`) sends it must be one."""


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
        if not any(k.lower() == "content-type" for k in headers or {}):
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
                        {"id": name, "object": "model", "created": 0, "owned_by": "picobot-tests"}
                        for name in self.server.owner.models
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
                    "message": merge_message(reply.deltas),
                    "finish_reason": reply.finish_reason,
                }
            ],
        }
        if reply.usage is not None:
            payload["usage"] = usage_dict(reply.usage, reply.cached, reply.usage_cost)
        self._send_json(200, payload, dict(reply.headers))

    def _stream(self, reply: Reply, request: dict[str, Any]) -> None:
        if not self._wait(reply.first_byte_delay):
            return self._reset()
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        frames = stream_frames(reply, str(request.get("model", "test-model")), include_usage)
        try:
            for sent, frame in enumerate(frames):
                if reply.cut_after is not None and sent >= reply.cut_after:
                    return self._reset()
                if reply.stall_after is not None and sent >= reply.stall_after:
                    while self._wait(reply.delay or 0.1):  # until the client hangs up
                        self._chunk(": keep-alive\n\n")
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

    def __init__(
        self,
        owner: OpenAITestServer,
        address: tuple[str, int],
        handler: type[_Handler] = _Handler,
    ) -> None:
        self.owner = owner
        self.stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(address, handler)

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

    handler: type[_Handler] = _Handler
    """The request handler (tests/support/anthropic_server.py speaks another wire format)."""

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
        self.models: list[str] = list(MODELS)
        """What `GET /v1/models` lists (picobot asks it before the first call)."""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> OpenAITestServer:
        if self._server is None:
            self._server = _Server(self, ("127.0.0.1", self._port), self.handler)
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

"""Newline-delimited JSON-RPC frames on the protocol descriptors: the SDK's message-level
`Transport`, so the agent decides what a bad frame gets.

The SDK's own stdio framing logs a line that is not JSON and carries on without an answer,
and an array or a scalar frame breaks its receive loop. Here every bad frame gets the
JSON-RPC error the spec names, with `id: null` when none can be read, and the agent keeps
serving: -32700 for text that is not JSON (or not UTF-8), -32600 for JSON that is not a
request, notification or response (batches included: picobot does not take them).
Unknown methods (-32601) and bad params (-32602) are answered by the SDK's router.

stdin is read, split and parsed by `run.json_lines` (the reader `agent --json` uses too), in
a thread, with the bounds of `core.json_input`: a frame over MAX_FRAME_BYTES, nested deeper
than 128, or holding NaN, Infinity, a number too large or an integer of over 4,300 digits is
a -32700 like any text that is not JSON (before them, one line of `[[[[…` raised a
RecursionError that ended the agent). Frames are written with `os.write` on the duplicated
stdout descriptor (`stdout_guard`), one whole line per call, and always as valid UTF-8.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from typing import Any

from picobot_tui.core.textsafe import clean_text
from picobot_tui.run.json_lines import Line, start_reader

log = logging.getLogger("picobot.acp")

MAX_FRAME_BYTES = 50 * 1024 * 1024
"""The SDK's own stdio limit: a prompt may embed big resources."""


def _error(code: int, message: str, id_: Any = None, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def frame_problem(message: Any) -> dict[str, Any] | None:
    """The -32600 answer for a decoded frame that is not a JSON-RPC 2.0 message, else None."""
    if isinstance(message, list):
        return _error(-32600, "Invalid request: batch requests are not supported")
    if not isinstance(message, dict):
        return _error(-32600, "Invalid request: a message must be a JSON object")
    id_ = message.get("id")
    if id_ is not None and (isinstance(id_, bool) or not isinstance(id_, (str, int, float))):
        return _error(-32600, "Invalid request: `id` must be a string, a number or null")
    if message.get("jsonrpc") != "2.0":
        return _error(-32600, 'Invalid request: `jsonrpc` must be "2.0"', id_)
    method = message.get("method")
    if method is None:
        if "id" not in message or ("result" not in message and "error" not in message):
            return _error(-32600, "Invalid request: no `method`, and not a response", id_)
        return None
    if not isinstance(method, str):
        return _error(-32600, "Invalid request: `method` must be a string", id_)
    params = message.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return _error(-32602, "Invalid params: `params` must be an object", id_)
    return None


def readable(message: dict[str, Any]) -> dict[str, Any]:
    """The SDK's bare "Invalid params" / "Method not found" errors, with what was wrong in
    the message itself (the details stay in `data`)."""
    err = message.get("error")
    if not isinstance(err, dict):
        return message
    data = err.get("data")
    text = err.get("message")
    if text == "Invalid params" and isinstance(data, dict) and isinstance(data.get("errors"), list):
        parts = []
        for e in data["errors"][:5]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p is not None) or "params"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        err = {**err, "message": "Invalid params: " + "; ".join(parts)}
    elif text == "Method not found" and isinstance(data, dict) and data.get("method"):
        err = {**err, "message": f"Method not found: {data['method']}"}
    else:
        return message
    return {**message, "error": err}


class StdioTransport:
    """`acp._transport.Transport` over two descriptors (stdin, the guarded stdout)."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self._in_fd = in_fd
        self._out_fd = out_fd
        self._queue: asyncio.Queue[Line | None] = asyncio.Queue()
        self._closed = False
        self._write_lock = threading.Lock()
        loop = asyncio.get_running_loop()
        start_reader(
            in_fd, loop, self._queue.put_nowait, max_bytes=MAX_FRAME_BYTES, name="acp-stdin"
        )

    # -- writing ---------------------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        self.write_frame(readable(message))

    def write_frame(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the protocol stream is closed")
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate (a file name that is not UTF-8, …)
            data = clean_text(text).encode()  # U+FFFD: still the same JSON
        view = memoryview(data)
        with self._write_lock:
            try:
                while view:
                    n = os.write(self._out_fd, view)
                    view = view[n:]
            except OSError as e:  # the client closed its end
                self._closed = True
                raise ConnectionError(f"cannot write to the client: {e}") from None

    # -- reading ---------------------------------------------------------------------------
    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._queue.get()
            if line is None:
                return None
            if line.problem is not None:
                self._answer(_error(-32700, f"Parse error: {line.problem}"))
                continue
            message = line.value
            problem = frame_problem(message)
            if problem is not None:
                log.warning("bad JSON-RPC frame: %s", problem["error"]["message"])
                if not (isinstance(message, dict) and "method" in message and "id" not in message):
                    self._answer(problem)  # a notification gets no answer, even an error
                continue
            assert isinstance(message, dict)  # frame_problem let only objects through
            return message

    def _answer(self, payload: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError):
            self.write_frame(payload)

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        self._closed = True

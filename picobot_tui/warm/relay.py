"""A model call answered by the warm server, for a process whose LiteLLM is still importing.

The TUI cannot run through the server (docs/server.md: a warm child has no controlling
terminal), so it imports LiteLLM itself after its first frame: 2.7-5.4 s here, and a
message sent in that time waited for it. `Relayed` wraps the TUI's model client: until
LiteLLM is imported in this process, each call is handed to a running warm server, whose
child (`picobot server relay`, relay_child.py) runs the same `LiteLLMClient.stream` with
this process's settings, environment and cwd, and writes its chunks back as JSON lines.
When no server answers at once (none running, stale, busy), or once LiteLLM is imported
here, the call runs in this process as before. The relay changes where a call runs, never
what it sends: the provider sees the same request either way (tests/server/test_relay.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from picobot_tui.core.llm.model import (
    Chunk,
    LLMError,
    ModelClient,
    ModelRequest,
    ResentChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from picobot_tui.core.settings import CoreSettings

log = logging.getLogger("picobot")

RELAY_ARGV = ["picobot", "server", "relay"]
GREET_TIMEOUT = 1.0
"""Seconds to wait for a server's hello before running the call here: the relay is only
worth it when it answers at once (a busy server's call is better made in this process,
whose import is already under way)."""
LINE_LIMIT = 64 << 20
"""Longest line read from the child (a chunk, or an error message)."""
_KINDS: dict[str, type[Chunk]] = {
    "text": TextChunk,
    "tool": ToolCallChunk,
    "usage": UsageChunk,
    "resent": ResentChunk,
}
_NAMES = {cls: name for name, cls in _KINDS.items()}


def encode_chunk(chunk: Chunk) -> dict[str, Any]:
    """One chunk as a JSON object (the child's side)."""
    return {"chunk": _NAMES[type(chunk)], **asdict(chunk)}


def decode_chunk(obj: dict[str, Any]) -> Chunk:
    """The chunk `encode_chunk` wrote (this side)."""
    fields = dict(obj)
    return _KINDS[fields.pop("chunk")](**fields)


def encode_error(error: LLMError) -> dict[str, Any]:
    return {
        "error": {
            "message": error.message,
            "kind": error.kind,
            "transient": error.transient,
            "status": error.status,
            "retry_after": error.retry_after,
            "hint": error.hint,
        }
    }


def decode_error(obj: dict[str, Any]) -> LLMError:
    e = obj["error"]
    return LLMError(
        str(e["message"]),
        kind=str(e["kind"]),
        transient=bool(e["transient"]),
        status=e.get("status"),
        retry_after=e.get("retry_after"),
        hint=str(e.get("hint") or ""),
    )


def _plain(value: Any) -> Any:
    """What json.dumps cannot write itself: a key's value (the child needs it to call the
    provider; it crosses a pipe to a process of this uid, never the network), a path."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def encode_call(settings: CoreSettings, request: ModelRequest) -> bytes:
    """The one line the child reads: the core settings as this process has them (config,
    variables and flags applied) and the request."""
    core = {name: getattr(settings, name) for name in CoreSettings.model_fields}
    payload = {
        "settings": CoreSettings.model_validate(core).model_dump(mode="python"),
        "request": {
            "model": request.model,
            "messages": list(request.messages),
            "tools": list(request.tools),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "cache_at": list(request.cache_at),
        },
    }
    return json.dumps(payload, default=_plain, ensure_ascii=False).encode() + b"\n"


def decode_call(line: bytes) -> tuple[CoreSettings, ModelRequest]:
    """The settings and request of `encode_call`'s line (bounded: untrusted like any input;
    a ValueError, KeyError or TypeError when it is not such a line)."""
    from picobot_tui.core.json_input import loads

    data = loads(line)
    req = data["request"]
    request = ModelRequest(
        model=req["model"],
        messages=req["messages"],
        tools=req["tools"],
        max_tokens=req["max_tokens"],
        temperature=req["temperature"],
        cache_at=tuple(req["cache_at"]),
    )
    return CoreSettings.model_validate(data["settings"]), request


class _Call:
    """A relayed call in flight: the socket to the server (closing it kills the child),
    the child's stdin and stdout."""

    def __init__(self, sock: socket.socket, to_child: int, from_child: int) -> None:
        self.sock, self.to_child, self.from_child = sock, to_child, from_child

    def send(self, data: bytes) -> None:
        """Write the call's one line, then close the child's stdin (blocking)."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.to_child, view) :]
        finally:
            os.close(self.to_child)
            self.to_child = -1

    def close(self) -> None:
        for fd in (self.to_child, self.from_child):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.to_child = self.from_child = -1
        self.sock.close()


def probe() -> str | None:
    """None when a server that would take a relayed call answers now, else why not."""
    from picobot_tui.warm import place
    from picobot_tui.warm.client import Missed, connect, greet

    try:
        sock = connect(place.socket_path())
    except (place.PlaceError, OSError) as e:
        return f"runtime dir: {e}"
    if isinstance(sock, Missed):
        return sock.why
    try:
        missed = greet(sock, GREET_TIMEOUT)
    except (OSError, ValueError) as e:
        return f"hello: {e}"
    finally:
        sock.close()
    return None if missed is None else missed.why


def open_call() -> _Call | str:
    """Hand `picobot server relay` to the running server, or say why not (blocking)."""
    from picobot_tui.warm import place, wire
    from picobot_tui.warm.client import Missed, connect, greet, request_for

    try:
        path = place.socket_path()
    except (place.PlaceError, OSError) as e:
        return f"runtime dir: {e}"
    sock = connect(path)
    if isinstance(sock, Missed):
        return sock.why
    opened: list[int] = []
    try:
        if (missed := greet(sock, GREET_TIMEOUT)) is not None:
            sock.close()
            return missed.why
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        opened = [in_r, in_w, out_r, out_w]
        null = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
        opened.append(null)
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        opened.append(cwd)
        # The child's stdin, stdout and stderr; what it logs goes to picobot.log.
        socket.send_fds(sock, [wire.RUN], [cwd, in_r, out_w, null])
        wire.send(sock, request_for(RELAY_ARGV, [0, 1, 2]))
        started = wire.recv(sock)
    except (OSError, wire.WireError, ValueError) as e:
        for fd in opened:
            with contextlib.suppress(OSError):
                os.close(fd)
        sock.close()
        return f"hand-over: {e}"
    for fd in (in_r, out_w, null, cwd):
        os.close(fd)
    if "child" not in started:
        os.close(in_w)
        os.close(out_r)
        sock.close()
        return f"refused: {started.get('error', started)}"
    sock.settimeout(None)
    return _Call(sock, in_w, out_r)


class Relayed:
    """A ModelClient that hands its calls to the warm server until `ready()` (LiteLLM is
    imported in this process), and to `inner` after, or whenever no server takes one."""

    def __init__(
        self,
        inner: ModelClient,
        settings: CoreSettings,
        *,
        ready: Callable[[], bool],
        opener: Callable[[], _Call | str] = open_call,
    ) -> None:
        self.inner = inner
        self.settings = settings
        self.ready = ready
        self.opener = opener
        self.relayed = 0
        """Calls the server answered (for tests and the log)."""
        self._first = threading.Event()
        """Set once a first call was answered by the server, or made here."""

    def before_import(self, stop: Callable[[], bool]) -> bool:
        """Wait (in the app's warm-up thread) while the server answers, until its first
        call is done or one is made here: importing LiteLLM here takes the interpreter
        lock from the turn the server is answering (bench 15g: 1.56 s to the first
        answer with the import beside it). Returns at once when no server answers; False
        when `stop()` turned true (the app is exiting: import nothing now)."""
        if probe() is not None:
            return True
        while not self._first.wait(0.1):
            if stop():
                return False
        return True

    def __getattr__(self, name: str) -> Any:  # warm(), rates() and the rest: the inner's
        return getattr(self.inner, name)

    def context_window(self, model: str) -> int | None:
        return self.inner.context_window(model)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        call = None if self.ready() else await asyncio.to_thread(self.opener)
        if call is None or isinstance(call, str):
            if call is not None:
                log.info("model call made here, not relayed: %s", call)
            self._first.set()  # the import is wanted now
            async for chunk in self.inner.stream(request):
                yield chunk
            return
        self.relayed += 1
        log.info("model call relayed to the warm server (LiteLLM is still importing here)")
        try:
            async for chunk in _read(call, encode_call(self.settings, request)):
                yield chunk
        finally:
            call.close()  # the server kills a child whose client went (Esc, an error)
            self._first.set()


async def _read(call: _Call, line: bytes) -> AsyncIterator[Chunk]:
    loop = asyncio.get_running_loop()
    await asyncio.to_thread(call.send, line)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    pipe = os.fdopen(os.dup(call.from_child), "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while line := await reader.readline():
            obj = json.loads(line)
            if "chunk" in obj:
                yield decode_chunk(obj)
            elif "error" in obj:
                raise decode_error(obj)
            elif obj.get("end"):
                return
        raise LLMError(
            "The warm server's call ended before the answer did (see server.log).",
            kind="connection",
            transient=True,
        )
    finally:
        transport.close()


def for_tui(inner: ModelClient, settings: CoreSettings) -> ModelClient:
    """The TUI's model client: relayed while its LiteLLM imports, when the server is
    allowed (PICOBOT_SERVER, server.enabled) and the model is a real one."""
    from picobot_tui.core.llm.client import LiteLLMClient, litellm_loaded
    from picobot_tui.warm import policy

    if not isinstance(inner, LiteLLMClient) or not policy.decide(os.environ).attach:
        return inner
    return Relayed(inner, settings, ready=litellm_loaded)

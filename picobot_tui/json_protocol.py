"""`picobot agent --json`: JSON lines on stdio, one object per line each way.

In:  {"type":"message","content":"...","session":"optional id"}
     {"type":"approval","id":"<tool call id>","decision":"allow"|"deny"}
Out: the loop's event stream, `event_to_dict(event)` per line, plus `error` events for bad
input. Messages queue and run in order; EOF lets the queue finish, then exits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from contextlib import aclosing, suppress
from typing import IO, Any

from picobot_tui.core.events import ErrorEvent, Event, event_to_dict
from picobot_tui.core.loop import ApprovalRequest, Decision
from picobot_tui.headless import (
    EXIT_OK,
    install_signal_handlers,
    print_warnings,
    signal_exit,
)
from picobot_tui.run_context import Run, RunError, RunOptions, open_run, open_session

MAX_LINE_BYTES = 4 * 1024 * 1024
_EOF = object()


class JsonChannel:
    """Reads requests, runs turns in order, writes events."""

    def __init__(self, out: IO[str], *, yes: bool) -> None:
        self.out = out
        self.yes = yes
        self.pending: dict[str, asyncio.Future[Decision]] = {}
        self.messages: asyncio.Queue[dict[str, Any] | object] = asyncio.Queue()
        self.closed = False

    def emit(self, payload: dict[str, Any]) -> None:
        self.out.write(json.dumps(payload, ensure_ascii=False) + "\n")
        self.out.flush()

    def emit_event(self, event: Event) -> None:
        self.emit(event_to_dict(event))

    def protocol_error(self, message: str) -> None:
        self.emit_event(ErrorEvent(message, "protocol"))

    async def confirm(self, req: ApprovalRequest) -> Decision:
        if self.yes:
            return "allow"
        if self.closed:
            return "deny"
        fut: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self.pending[req.id] = fut
        try:
            return await fut
        finally:
            self.pending.pop(req.id, None)

    def handle_line(self, raw: bytes | None, too_long: bool = False) -> None:
        """Route one input line (called on the event loop)."""
        if too_long:
            self.protocol_error(f"input line longer than {MAX_LINE_BYTES} bytes was ignored")
            return
        assert raw is not None
        if not raw.strip():
            return
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            self.protocol_error(f"invalid JSON line ignored: {e}")
            return
        if not isinstance(data, dict):
            self.protocol_error('each line must be a JSON object with a "type"')
            return
        kind = data.get("type")
        if kind == "message":
            content, session = data.get("content"), data.get("session")
            if not isinstance(content, str) or not content.strip():
                self.protocol_error('a message needs a non-empty string "content"')
            elif session is not None and not isinstance(session, str):
                self.protocol_error('"session" must be a string id when given')
            else:
                self.messages.put_nowait(data)
        elif kind == "approval":
            call_id, decision = data.get("id"), data.get("decision")
            if decision not in ("allow", "deny"):
                self.protocol_error('an approval needs "decision": "allow" or "deny"')
            elif not isinstance(call_id, str) or call_id not in self.pending:
                self.protocol_error(f"no approval is waiting for id {call_id!r}")
            elif not self.pending[call_id].done():
                self.pending[call_id].set_result(decision)
        else:
            self.protocol_error(f'unknown message type {kind!r} (use "message" or "approval")')

    def handle_eof(self) -> None:
        self.closed = True
        for fut in self.pending.values():
            if not fut.done():
                fut.set_result("deny")
        self.messages.put_nowait(_EOF)

    async def serve(self, run: Run) -> None:
        while True:
            item = await self.messages.get()
            if item is _EOF:
                return
            assert isinstance(item, dict)
            wanted = item.get("session")
            if wanted and run.runtime.store.normalize_key(wanted) != run.session.key:
                try:
                    new = open_session(run.runtime, wanted, run.runtime.loop.model_name)
                except RunError as e:
                    self.emit_event(ErrorEvent(e.message, "session"))
                    continue
                run.session.close()
                run.session = new
            loop = run.runtime.loop
            async with aclosing(loop.run_turn(run.session, item["content"])) as events:
                async for event in events:
                    self.emit_event(event)


def _reader(channel: JsonChannel, loop: asyncio.AbstractEventLoop, stdin: IO[bytes]) -> None:
    """Read stdin in a thread so a slow or huge line never blocks the event loop."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            break
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # discard the rest of the oversized line
                rest = stdin.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            loop.call_soon_threadsafe(channel.handle_line, None, True)
            continue
        loop.call_soon_threadsafe(channel.handle_line, line)
    loop.call_soon_threadsafe(channel.handle_eof)


async def _run(opts: RunOptions, yes: bool) -> int:
    channel = JsonChannel(sys.stdout, yes=yes)
    received: list[int] = []
    with open_run(opts, confirm=channel.confirm) as run:
        print_warnings(run.warnings, sys.stderr)
        task = asyncio.current_task()
        assert task is not None
        install_signal_handlers(task, received)
        threading.Thread(
            target=_reader,
            args=(channel, asyncio.get_running_loop(), sys.stdin.buffer),
            daemon=True,
        ).start()
        with suppress(asyncio.CancelledError):
            await channel.serve(run)
    if received:
        return signal_exit(received)
    # A failed turn is reported in its events; the channel itself ended cleanly.
    return EXIT_OK


def run_json(opts: RunOptions, *, yes: bool) -> int:
    return asyncio.run(_run(opts, yes))

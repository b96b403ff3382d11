"""`picobot agent --json`: JSON lines on stdio, one object per line each way.

In:  {"type":"message","content":"...","session":"optional id"}
     {"type":"approval","id":"<tool call id>",
      "decision":"allow"|"allow_session"|"always"|"deny", "reason":"optional, with deny",
      "scope":"workspace"|"everywhere" (optional, with always; workspace by default)}
Out: the loop's event stream, `protocol.output_dict(event)` per line (each with
`"protocol": 1`), plus `error` events for bad input. Any line may carry `"protocol"`: one
naming another version is a `protocol` error. `picobot schema` prints the JSON Schema of
both directions. Messages queue and run in order; EOF lets the queue finish, then exits. After
`maxConsecutiveFailures` model calls in a row failed (an `error` of kind
`too_many_failures`), the channel runs no queued message and exits 1.

An `approval_requested` event carries `preview` (escapes made visible, capped with a marker),
`hidden` (what the preview leaves out, "" when nothing), `full` (the whole text), `scope`
("tool", or "host" for web_fetch), `host`, `prefix`, `rule` and `note`. "allow_session" allows
the scope (the tool, or that host) until the channel ends; "always" also saves it, as the
TUI's "always" does: for this workspace (permissions.json), or with `"scope": "everywhere"` to
config.json (`tools.alwaysAllow`, or `tools.web.allowHosts` for a host). For exec, "always"
saves only the rule the event offers (`rule`: `exec(git status:*)` with `prefix` "git
status", or the exact command `exec(ls -la)` with `prefix` null); with `rule` null it allows
this call only. `note` says why a saved rule did not cover the call ("" when none matched).
A "deny" may carry a `reason` (a string): the model reads it in the tool result.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import aclosing, suppress
from typing import IO, TYPE_CHECKING, Any

from picobot_tui.config.settings import Settings
from picobot_tui.core.approval import ApprovalRequest, Decision, Denied
from picobot_tui.core.events import ErrorEvent, Event, Notice
from picobot_tui.core.loop import STORAGE_ERROR
from picobot_tui.core.sessions import SessionError
from picobot_tui.headless.protocol import DECISIONS, PROTOCOL_VERSION, SCOPES, output_dict
from picobot_tui.run.config_warnings import print_warnings
from picobot_tui.run.context import Run, RunError, RunOptions, open_run, open_session
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_OK
from picobot_tui.run.json_lines import Line, parse_line, start_reader
from picobot_tui.run.runtime import mcp_running
from picobot_tui.run.signals import install_signal_handlers, signal_exit

if TYPE_CHECKING:
    from picobot_tui.config.remember import Scope
    from picobot_tui.core.tools.base import ToolContext

MAX_LINE_BYTES = 4 * 1024 * 1024
"""Longer input lines are dropped as they stream in (one `protocol` error each). Lines are
read and parsed by `run.json_lines`, the reader `picobot acp` uses: nesting deeper than 128,
NaN/Infinity and numbers too large are `protocol` errors like any line that is not JSON."""
_EOF = object()


class JsonChannel:
    """Reads requests, runs turns in order, writes events."""

    def __init__(self, out: IO[str], *, yes: bool) -> None:
        self.out = out
        self.yes = yes
        self.pending: dict[str, asyncio.Future[Decision | Denied]] = {}
        self.messages: asyncio.Queue[dict[str, Any] | object] = asyncio.Queue()
        self.closed = False
        self.settings: Settings | None = None  # the run's, once loaded (for "always")
        self.ctx: ToolContext | None = None  # the run's tool context (this workspace's rules)
        self.scopes: dict[str, Scope] = {}  # a pending "always" answer's scope, by call id
        self.storage_failed = False
        self.stopped = False  # too many model failures in a row: no more turns (exit 1)

    def emit(self, payload: dict[str, Any]) -> None:
        self.out.write(json.dumps(payload, ensure_ascii=False) + "\n")
        self.out.flush()

    def emit_event(self, event: Event) -> None:
        self.emit(output_dict(event))

    def protocol_error(self, message: str) -> None:
        self.emit_event(ErrorEvent(message, "protocol"))

    async def confirm(self, req: ApprovalRequest) -> Decision | Denied:
        if self.yes:
            return "allow"
        if self.closed:
            return "deny"
        fut: asyncio.Future[Decision | Denied] = asyncio.get_running_loop().create_future()
        self.pending[req.id] = fut
        try:
            decision = await fut
        finally:
            self.pending.pop(req.id, None)
        scope = self.scopes.pop(req.id, "workspace")
        if decision == "always":
            self._remember(req, scope)  # and the loop allows this call
        return decision

    def _remember(self, req: ApprovalRequest, scope: Scope) -> None:
        from picobot_tui.config.remember import remember_always

        if self.settings is None or self.ctx is None:
            return
        try:
            remember_always(self.settings, self.ctx, req, scope)
        except (OSError, ValueError) as e:
            self.emit_event(
                ErrorEvent(f"could not save the rule: {e} (allowed this once)", "config")
            )

    def handle_line(self, raw: bytes) -> None:
        """Route one raw input line (parsed here with the reader's bounds)."""
        if raw.strip():
            self.handle(parse_line(raw, MAX_LINE_BYTES))

    def handle(self, line: Line | None) -> None:
        """Route one line from the reader, or its end (None); called on the event loop."""
        if line is None:
            self.handle_eof()
            return
        if line.too_long:
            self.protocol_error(f"input line longer than {MAX_LINE_BYTES} bytes was ignored")
            return
        if line.problem is not None:
            self.protocol_error(f"invalid JSON line ignored: {line.problem}")
            return
        data = line.value
        if not isinstance(data, dict):
            self.protocol_error('each line must be a JSON object with a "type"')
            return
        kind = data.get("type")
        version = data.get("protocol", PROTOCOL_VERSION)
        if version != PROTOCOL_VERSION or isinstance(version, bool):
            self.protocol_error(
                f'"protocol" is {version!r}, but this picobot speaks protocol '
                f"{PROTOCOL_VERSION} (`picobot schema` prints it)"
            )
        elif kind == "message":
            content, session = data.get("content"), data.get("session")
            if not isinstance(content, str) or not content.strip():
                self.protocol_error('a message needs a non-empty string "content"')
            elif session is not None and not isinstance(session, str):
                self.protocol_error('"session" must be a string id when given')
            else:
                self.messages.put_nowait(data)
        elif kind == "approval":
            call_id, decision, reason = data.get("id"), data.get("decision"), data.get("reason")
            scope = data.get("scope")
            if decision not in DECISIONS:
                self.protocol_error(
                    'an approval needs "decision": "allow", "allow_session", "always" or "deny"'
                )
            elif reason is not None and (not isinstance(reason, str) or decision != "deny"):
                self.protocol_error('"reason" is a string, and only goes with "decision": "deny"')
            elif scope is not None and (scope not in SCOPES or decision != "always"):
                self.protocol_error(
                    '"scope" is "workspace" or "everywhere", and only goes with "decision": '
                    '"always"'
                )
            elif not isinstance(call_id, str) or call_id not in self.pending:
                self.protocol_error(f"no approval is waiting for id {call_id!r}")
            elif not self.pending[call_id].done():
                answer = Denied(reason) if reason and reason.strip() else decision
                if scope is not None:
                    self.scopes[call_id] = scope
                self.pending[call_id].set_result(answer)
        else:
            self.protocol_error(f'unknown message type {kind!r} (use "message" or "approval")')

    def handle_eof(self) -> None:
        self.closed = True
        for fut in self.pending.values():
            if not fut.done():
                fut.set_result("deny")
        self.messages.put_nowait(_EOF)

    async def serve(self, run: Run, signals: list[int] | None = None) -> None:
        """Run queued messages in order until EOF, or until a signal arrives (`signals` is
        the list the signal handlers append to)."""
        while True:
            item = await self.messages.get()
            if item is _EOF:
                return
            assert isinstance(item, dict)
            wanted = item.get("session")
            if wanted:
                # A malformed or unknown id, or `latest` naming the session already open,
                # must not end the channel: resolve first, then switch only to another one.
                try:
                    key, note = run.runtime.store.resolve_with_note(wanted)
                except SessionError as e:
                    self.emit_event(ErrorEvent(str(e), "session"))
                    continue
                if note:  # `latest` from another workspace
                    self.emit_event(Notice("session", note))
                if key != run.session.key:
                    try:
                        new = open_session(run.runtime, key, run.runtime.loop.model_name)
                    except RunError as e:
                        self.emit_event(ErrorEvent(e.message, "session"))
                        continue
                    run.session.close()
                    run.session = new
            loop = run.runtime.loop
            async with aclosing(loop.run_turn(run.session, item["content"])) as events:
                async for event in events:
                    self.emit_event(event)
                    if isinstance(event, ErrorEvent) and event.kind == STORAGE_ERROR:
                        self.storage_failed = True
            if loop.failures.stopped:
                # maxConsecutiveFailures model calls in a row failed: the agent takes no
                # more turns, queued or not (the loop already said so in an error event).
                self.stopped = True
                return
            if self.storage_failed:
                # The disk refused a write (full, quota): later turns could not be saved
                # either, so end the channel (exit 1) instead of losing them silently.
                return
            if signals:
                # The loop turned the signal's cancellation into a cancelled turn (and
                # swallowed it), so stop here instead of waiting for more input.
                return


async def _run(opts: RunOptions, yes: bool) -> int:
    channel = JsonChannel(sys.stdout, yes=yes)
    received: list[int] = []
    with open_run(opts, confirm=channel.confirm, lazy=True, source="json") as run:
        channel.settings, channel.ctx = run.settings, run.runtime.tools.ctx
        print_warnings(run.warnings, sys.stderr)
        for note in run.notes:
            channel.emit_event(Notice("session", note))
        task = asyncio.current_task()
        assert task is not None
        install_signal_handlers(task, received)
        start_reader(
            sys.stdin.fileno(), asyncio.get_running_loop(), channel.handle, max_bytes=MAX_LINE_BYTES
        )
        with suppress(asyncio.CancelledError):
            async with mcp_running(run.runtime):
                await channel.serve(run, received)
    if received:
        return signal_exit(received)
    if channel.storage_failed or channel.stopped:
        return EXIT_ERROR
    # A failed turn is reported in its events; the channel itself ended cleanly.
    return EXIT_OK


def run_json(opts: RunOptions, *, yes: bool) -> int:
    return asyncio.run(_run(opts, yes))

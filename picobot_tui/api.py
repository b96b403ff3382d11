"""The Python API: `Agent.process_direct()` and `Agent.stream()`, on the CLI's own wiring.

    async with Agent(model="demo") as agent:
        text = await agent.process_direct("hello")          # a new session
        more = await agent.process_direct("and then?", session=agent.session)

An `Agent` reads the config the CLI reads (PICOBOT_HOME, the environment), keeps one session
open (locked, as the CLI does) and closes it on `close()` or at the end of `async with`.
Its MCP servers (tools.mcpServers) connect with the first turn and are closed by `async with`
or `await aclose()`: the sync `close()` cannot wait for their processes to end.
Importing this module is light: settings, the core and LiteLLM load when an Agent is made.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from picobot_tui.core.events import ApprovalRequested, ErrorEvent, Event, TurnFinished

if TYPE_CHECKING:
    from picobot_tui.core.mcp.manager import McpManager
    from picobot_tui.core.sessions import Session

__all__ = ["Agent", "AgentError", "ConfirmFn"]

log = logging.getLogger("picobot.api")

Approval = Literal["ask", "auto", "readonly"]
ConfirmFn = Callable[[ApprovalRequested], Awaitable[str | bool]]
"""Asked before a tool that needs approval runs: "allow", "allow_session" (this tool, or
web_fetch's host, for the Agent's life), "deny", or True/False. "always" counts as
"allow_session" (the library never edits config.json)."""

_DECISIONS = {"allow": "allow", "allow_session": "allow_session", "always": "allow_session"}
_SETTLE_STEPS = 20  # loop iterations; the finalizer's close took 2 here (demo and LiteLLM)
SESSION_CHANNEL = "lib"
"""New sessions are `lib:<id>`: `picobot sessions list` shows them, `-s lib:<id>` resumes."""


def _library_logging(log_path: Path, scrub: Callable[[str], str]) -> None:
    """picobot's own records go to its log file, masked, as the CLI's do. Unlike the CLI,
    the host's logging is left alone: no third-party logger is touched and records still
    propagate. The masking filter rewrites the record in place, and picobot's handler runs
    before any ancestor's, so what reaches the host's handlers is masked too."""
    from picobot_tui.run.logs import LOGGER, file_handler

    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if getattr(h, "_picobot_api", False)]:
        logger.removeHandler(old)
        old.close()
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    handler = file_handler(log_path, scrub)
    if handler is None:
        return  # a read-only home must not stop the agent
    handler._picobot_api = True  # type: ignore[attr-defined]
    logger.addHandler(handler)


class AgentError(Exception):
    """A turn that ended other than `final`, or a problem before it could run.

    `outcome`: the turn's outcome ("error", "max_iterations", "budget_exhausted",
    "cancelled"); "error" for a problem found before the turn (config, session).
    `kind`: the error's kind for an "error" outcome ("auth", "rate_limit", "timeout",
    "connection", "server", "context_window", "storage", ..., "config" and "session" before a
    turn, "busy" for a second turn at once); the outcome itself otherwise.
    `session`: the session's key (None when none was opened); `content`: the turn's text;
    `hint`: what to do about it, when picobot knows.
    """

    def __init__(
        self,
        message: str,
        *,
        outcome: str = "error",
        kind: str = "internal",
        session: str | None = None,
        content: str = "",
        hint: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.outcome = outcome
        self.kind = kind
        self.session = session
        self.content = content
        self.hint = hint


class Agent:
    """The agent as a library: one runtime (settings, tools, model) and one open session.

    `model`, `workspace` and `approval` override the config like `--model`, `--workspace`
    and `tools.approval`. Without `confirm`, a tool that needs approval under "ask" is
    refused, as headless without `--yes` refuses it. Raises AgentError (kind "config") when
    the config, the key, the workspace or the token budget would stop the CLI too.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        approval: Approval | None = None,
        confirm: ConfirmFn | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if approval not in (None, "ask", "auto", "readonly"):
            raise ValueError(f"approval must be 'ask', 'auto' or 'readonly', not {approval!r}")
        from picobot_tui.run.context import (
            RunError,
            RunOptions,
            budget_problem,
            credentials_problem,
            load_checked_settings,
        )
        from picobot_tui.run.runtime import build_runtime

        opts = RunOptions(
            model=model,
            workspace=Path(workspace) if workspace is not None else None,
            max_tokens=max_tokens,
        )
        try:
            settings, self.warnings = load_checked_settings(opts)
            if approval is not None:
                settings.tools.approval = approval
            self.model = model or settings.agents.defaults.model
            self._confirm = confirm
            self._runtime = build_runtime(settings, model=self.model, confirm=self._ask)
            _library_logging(settings.log_path, self._runtime.scrub)
            problem = budget_problem(self._runtime) or credentials_problem(settings, self.model)
        except RunError as e:
            raise AgentError(e.message, kind="config") from None
        if problem:
            raise AgentError(problem, kind="config")
        self.settings = settings
        self.workspace = settings.workspace_path
        self._open: Session | None = None
        self._last: str | None = None
        self._busy = False
        self._closed = False
        self._mcp_loop: asyncio.AbstractEventLoop | None = None
        self._mcp_closing: asyncio.Task[None] | None = None

    # -- sessions ----------------------------------------------------------------------
    @property
    def session(self) -> str | None:
        """The key of the session last used (None before the first turn)."""
        return self._last

    def _use(self, session: str | None) -> Session:
        """The session a turn runs in: a new one (its file appears with the first message),
        or the one `session` names ("latest", a key, a bare id or a unique prefix). Only one
        is open (locked) at a time: switching closes the previous one."""
        from picobot_tui.core.sessions import SessionError
        from picobot_tui.run.context import RunError, open_session

        store = self._runtime.store
        try:
            if session is None:
                key = store.new_key(SESSION_CHANNEL)
                new = store.open(key, model=self.model, create=True, lazy=True, source="library")
            else:
                key = store.resolve(session)
                if self._open is not None and key == self._open.key:
                    return self._open
                new = open_session(self._runtime, key, self.model)
        except RunError as e:
            raise AgentError(e.message, kind="session", session=session) from None
        except SessionError as e:
            raise AgentError(str(e), kind="session", session=session) from None
        self._release()
        self._open = new
        return new

    def _release(self) -> None:
        if self._open is not None:
            self._runtime.loop.forget(self._open.key)  # rebuilt from the file if reopened
            self._open.close()
            self._open = None

    @property
    def stopped(self) -> bool:
        """True after `maxConsecutiveFailures` failed model calls in a row (across turns):
        every turn then raises AgentError(kind="too_many_failures") until `reset_failures()`."""
        return self._runtime.loop.failures.stopped

    def reset_failures(self) -> None:
        """Let a stopped Agent take turns again (as the TUI does on the user's next message)."""
        self._runtime.loop.failures.reset()

    def close(self) -> None:
        """Close (unlock) the open session. The Agent can't run turns afterwards.

        MCP servers are closed by `async with` or `await aclose()`: this sync call cannot
        wait for them. Called in a running loop, it starts their closing in the background;
        after the loop has ended (`asyncio.run` returned) they are gone already, as
        `asyncio.run` cancels what is left and the SDK ends a cancelled server's process."""
        self._release()
        self._closed = True
        mcp = self._runtime.mcp
        if mcp is None or self._mcp_loop is None or self._mcp_closing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if loop is self._mcp_loop:
            self._mcp_closing = loop.create_task(mcp.close(), name="picobot-mcp-close")

    async def aclose(self) -> None:
        """Close the session and the MCP servers, and wait until their processes ended."""
        await self._settle()
        self.close()
        if self._mcp_closing is not None:
            await asyncio.shield(self._mcp_closing)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- MCP servers -------------------------------------------------------------------
    def _start_mcp(self) -> None:
        """Connect the MCP servers in this turn's loop (the first turn waits for them,
        bounded by tools.mcpConnectTimeout). A later turn in another loop (`asyncio.run`
        per call) starts them again: the servers of the first loop ended with it."""
        mcp = self._runtime.mcp
        if mcp is None:
            return
        loop = asyncio.get_running_loop()
        if self._mcp_loop is loop:
            return
        if self._mcp_loop is not None:
            mcp = self._fresh_mcp(mcp)
        self._mcp_loop = loop
        mcp.start()

    def _fresh_mcp(self, old: McpManager) -> McpManager:
        from picobot_tui.core.mcp.manager import McpManager

        runtime = self._runtime
        for name in old.servers:
            for tool in old.tool_names(name):
                runtime.tools.remove(tool)
        new = McpManager(
            self.settings.tools.mcp_servers,
            workspace=runtime.tools.ctx.workspace,
            registry=runtime.tools,
            connect_timeout=old.connect_timeout,
            scrub=runtime.scrub,
        )
        runtime.mcp = new
        runtime.loop.before_turn = new.ready_for_turn
        return new

    async def _settle(self) -> None:
        """Let an abandoned turn finish closing. A `stream()` left by `break` is closed by
        asyncio's async-generator finalizer, a task it schedules when the generator is
        collected: a few loop iterations later it records the turn as cancelled and frees
        the Agent."""
        for _ in range(_SETTLE_STEPS):
            if not self._busy:
                return
            await asyncio.sleep(0)

    # -- approvals ---------------------------------------------------------------------
    async def _ask(self, request: ApprovalRequested) -> Any:
        if self._confirm is None:
            return "deny"
        try:
            answer = await self._confirm(request)
        except Exception:  # a broken callback refuses; it must not leave the turn half-done
            log.exception("confirm() raised; %s was refused", request.name)
            return "deny"
        if answer is True:
            return "allow"
        return _DECISIONS.get(answer, "deny") if isinstance(answer, str) else "deny"

    # -- turns -------------------------------------------------------------------------
    async def stream(
        self, message: str, *, session: str | None = None
    ) -> AsyncGenerator[Event, None]:
        """Run one turn and yield its typed events (`picobot_tui.core.events`), ending with
        `TurnFinished`. A failed turn is events (ErrorEvent, then TurnFinished), not an
        exception. Leaving the loop early cancels the turn, recorded as cancelled (at once
        inside `contextlib.aclosing`, else when asyncio closes the collected generator: the
        next turn and `async with` wait for that)."""
        if self._closed:
            raise AgentError("this Agent is closed", kind="closed", session=self._last)
        if not isinstance(message, str) or not message.strip():
            raise ValueError("the message is empty")
        if self._busy:
            await self._settle()
        if self._busy:
            raise AgentError(
                "a turn is already running on this Agent; await it first (or make another "
                "Agent for another session)",
                kind="busy",
                session=self._last,
            )
        self._busy = True
        try:
            self._start_mcp()
            current = self._use(session)
            self._last = current.key
            outcome = None
            async with aclosing(self._runtime.loop.run_turn(current, message)) as events:
                async for event in events:
                    if isinstance(event, TurnFinished):
                        outcome = event.outcome
                    yield event
            task = asyncio.current_task()
            if outcome == "cancelled" and task is not None and task.cancelling():
                # The loop recorded the cancellation as a turn outcome; the task was still
                # cancelled (asyncio.timeout, task.cancel()), so it ends as one.
                raise asyncio.CancelledError
        finally:
            self._busy = False

    async def process_direct(self, message: str, *, session: str | None = None) -> str:
        """Run one turn and return the final answer. `session`: None for a new session,
        "latest", or an id (`agent.session` continues the last one). Raises AgentError
        when the turn ends other than `final`."""
        finished: TurnFinished | None = None
        error: ErrorEvent | None = None
        async with aclosing(self.stream(message, session=session)) as events:
            async for event in events:
                if isinstance(event, ErrorEvent):
                    error = event
                elif isinstance(event, TurnFinished):
                    finished = event
        if finished is None:  # run_turn always ends with one: a bug if not
            raise AgentError("the turn ended without an outcome", session=self._last)
        if finished.outcome == "final":
            return finished.content
        failed = finished.outcome == "error"
        raise AgentError(
            (error.message if error and failed else finished.content) or finished.outcome,
            outcome=finished.outcome,
            kind=(error.kind if error else "internal") if failed else finished.outcome,
            session=finished.session,
            content=finished.content,
            hint=error.hint if error and failed else "",
        )

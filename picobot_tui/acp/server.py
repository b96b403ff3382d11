"""The `acp.Agent`: initialize, session/new, load, list, set_mode, prompt and cancel, over
the guarded stdio transport; `run_acp()` serves until the client closes stdin (or a signal),
then cancels the running turns, closes every session and its MCP servers, and exits 0.

Start-up: `initialize` is answered at once; settings and LiteLLM load in the background
after it, and only the first `session/prompt` of a session waits for the model to be
importable and checked (model name, key, token budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp import PROTOCOL_VERSION, RequestError
from acp import schema as s
from acp.agent.connection import AgentSideConnection

from picobot_tui.acp.modes import MODES
from picobot_tui.acp.outbox import Outbox
from picobot_tui.acp.permissions import ask_client
from picobot_tui.acp.replay import history_updates
from picobot_tui.acp.transport import StdioTransport
from picobot_tui.acp.turns import rpc_error, run_prompt, uncancel
from picobot_tui.acp.warmup import Warmup
from picobot_tui.core.paths import directory_problem
from picobot_tui.core.visible import label
from picobot_tui.run import inherited

if TYPE_CHECKING:
    from acp.interfaces import Agent

    from picobot_tui.acp.sessions import AcpSession, CwdBook
    from picobot_tui.core.approval import ApprovalRequest, Decision

# What initialize needs is imported above; the core, the config and the session wiring are
# imported when a session is opened (`picobot acp` answers initialize before they load).

log = logging.getLogger("picobot.acp")

PAGE = 50
BUSY = -32600  # "Invalid request": the session cannot take it now


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
DRAIN_S = 10.0
"""At the end of stdin, how long the requests in flight may take to be answered."""


def _tracked(fn: F) -> F:
    """The request's task (the SDK's, which writes the answer) is waited for at the end of
    stdin: a client may send its last request and close stdin at once."""

    @functools.wraps(fn)
    async def wrapper(self: PicobotAgent, *args: Any, **kwargs: Any) -> Any:
        task = asyncio.current_task()
        if task is not None:
            self._inflight.add(task)
            task.add_done_callback(self._inflight.discard)
        return await fn(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _version() -> str:
    """picobot's version. The package's __init__ names the library API (a peer front end
    acp may not import), so it is read from the loaded package, not imported by name."""
    import importlib

    return str(getattr(importlib.import_module("picobot_tui"), "__version__", "unknown"))


def _params_error(message: str, **data: Any) -> RequestError:
    return rpc_error(-32602, message, data or None)


class PicobotAgent:
    def __init__(self, *, logs: bool = False) -> None:
        self.logs = logs
        self.out = Outbox()
        self.client_caps = s.ClientCapabilities()
        self.client_info: s.Implementation | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.warmup = Warmup()
        self._warm_started = False
        self._prepared: asyncio.Task[Any] | None = None
        self._log_scrub: Any = None
        self._inflight: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        self.out.connect(conn)

    # -- start-up ---------------------------------------------------------------------------
    def _start_background(self) -> None:
        if not self._warm_started:
            self._warm_started = True
            self.warmup.start()
        if self._prepared is None:
            self._prepared = asyncio.get_running_loop().create_task(
                asyncio.to_thread(self._prepare)
            )

    def _prepare(self) -> tuple[Any, CwdBook]:
        """The config as found (for logging, the session store and the cwd book). A config
        error answers the session request with the config's own message; the next one reads
        the config again."""
        from picobot_tui.acp.sessions import CwdBook
        from picobot_tui.config.settings import load_settings
        from picobot_tui.core.secrets import Scrubber
        from picobot_tui.run.logs import setup_logging
        from picobot_tui.run.session_stores import session_store

        settings, _ = load_settings()
        scrub = Scrubber(settings.secrets())
        setup_logging(settings.log_path, scrub, to_stderr=self.logs)
        self._log_scrub = scrub  # each session's own secrets are added (its MCP servers')
        store = session_store(settings.sessions_dir, scrub=scrub)
        return store, CwdBook(settings.data_dir / "acp_sessions.json")

    async def _ready(self) -> tuple[Any, CwdBook]:
        self._start_background()
        assert self._prepared is not None
        try:
            return await asyncio.shield(self._prepared)
        except Exception as e:
            self._prepared = None  # the next request reads the (fixed?) config again
            raise rpc_error(-32603, f"picobot cannot start: {e}") from None

    # -- initialize -------------------------------------------------------------------------
    @_tracked
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: s.ClientCapabilities | None = None,
        client_info: s.Implementation | None = None,
        **kwargs: Any,
    ) -> s.InitializeResponse:
        self.client_caps = client_capabilities or s.ClientCapabilities()
        self.client_info = client_info
        if protocol_version != PROTOCOL_VERSION:
            log.info(
                "the client asked for protocol %s; picobot speaks %s",
                protocol_version,
                PROTOCOL_VERSION,
            )
        # After the answer is written (the SDK writes it when this returns).
        asyncio.get_running_loop().call_soon(self._start_background)
        return s.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=s.AgentCapabilities(
                load_session=True,
                prompt_capabilities=s.PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=s.McpCapabilities(http=True, sse=True),
                session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()),
            ),
            auth_methods=[],
            agent_info=s.Implementation(name="picobot", title="picobot", version=_version()),
        )

    @_tracked
    async def authenticate(self, method_id: str, **kwargs: Any) -> s.AuthenticateResponse | None:
        raise _params_error(f"picobot offers no authentication methods (asked for {method_id!r})")

    # -- sessions ---------------------------------------------------------------------------
    def _get(self, session_id: str) -> AcpSession:
        acp_s = self.sessions.get(session_id)
        if acp_s is None:
            raise _params_error(
                f"unknown session {session_id!r}: create one with session/new or load it with session/load",
                sessionId=session_id,
            )
        return acp_s

    @staticmethod
    def _cwd(cwd: str) -> Path:
        path = Path(cwd)
        if not path.is_absolute():
            raise _params_error(f"cwd must be an absolute path, got {cwd!r}")
        problem = directory_problem(path)
        if problem is not None:
            raise _params_error(f"cwd {label(cwd, 200, exact=True)!r} {problem}")
        return path.resolve()

    def _modes(self, acp_s: AcpSession) -> s.SessionModeState:
        return s.SessionModeState(
            current_mode_id=acp_s.mode,
            available_modes=[
                s.SessionMode(id=k, name=n, description=d) for k, (n, d) in MODES.items()
            ],
        )

    async def _open(
        self, cwd: str, mcp_servers: list[Any] | None, key: str | None, acp_id: str | None = None
    ) -> AcpSession:
        store, book = await self._ready()
        path = self._cwd(cwd)
        from picobot_tui.acp.mcp_servers import McpServerProblem, convert

        try:
            servers = convert(mcp_servers)
        except McpServerProblem as e:
            raise _params_error(str(e)) from None
        acp_s = await asyncio.to_thread(self._build, path, servers, key, store)
        await asyncio.to_thread(book.record, acp_s.session.key, path)
        if acp_id is not None:
            acp_s.id = acp_id  # the id the client knows it by
        self._attach_client_fs(acp_s)
        if acp_s.runtime.mcp is not None:
            acp_s.runtime.mcp.start()  # connects in the background; the first turn waits
        return acp_s

    def _build(self, cwd: Path, servers: dict[str, Any], key: str | None, store: Any) -> AcpSession:
        from picobot_tui.acp.sessions import (
            SOURCE,
            AcpSession,
            build_session_runtime,
            session_settings,
        )
        from picobot_tui.core.sessions import SessionError, SessionNotFound
        from picobot_tui.run.options import RunError

        holder: list[AcpSession] = []

        async def confirm(req: ApprovalRequest) -> Decision:
            return await ask_client(self.out, holder[0], req)

        try:
            settings = session_settings(cwd, servers)
            runtime = build_session_runtime(settings, confirm)
            # The client's MCP servers bring env/header secrets the log has not seen.
            if self._log_scrub is not None:
                for secret in settings.secrets():
                    self._log_scrub.add(secret)
        except RunError as e:
            raise _params_error(e.message) from None
        model = settings.agents.defaults.model
        try:
            if key is None:
                key = runtime.store.new_key(SOURCE)
                session = runtime.store.open(
                    key, model=model, create=True, lazy=True, source=SOURCE
                )
            else:
                session = runtime.store.open(key, model=model, create=False)
        except SessionNotFound as e:
            raise _params_error(str(e), sessionId=key) from None
        except SessionError as e:  # in use by another picobot, or the disk refused
            raise rpc_error(BUSY, str(e)) from None
        acp_s = AcpSession(id=key, cwd=cwd, settings=settings, runtime=runtime, session=session)
        holder.append(acp_s)
        return acp_s

    def _attach_client_fs(self, acp_s: AcpSession) -> None:
        """Client file access (fs/read_text_file, fs/write_text_file) for the file tools,
        when the client advertises it: `client_fs.attach` (its own module) wires it into
        the session's ToolContext; without it, the tools use the disk."""
        from picobot_tui.acp.client_fs import attach

        if self.out.client is not None:
            attach(acp_s.runtime.tools.ctx, self.out.client, acp_s.id, self.client_caps)

    @_tracked
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> s.NewSessionResponse:
        acp_s = await self._open(cwd, mcp_servers, None)
        self.sessions[acp_s.id] = acp_s
        log.info("ACP session %s in %s", acp_s.id, acp_s.cwd)
        return s.NewSessionResponse(session_id=acp_s.id, modes=self._modes(acp_s))

    @_tracked
    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> s.LoadSessionResponse | None:
        acp_s = self.sessions.get(session_id)
        if acp_s is not None and acp_s.running:
            raise rpc_error(BUSY, f"session {session_id!r} is running a prompt; cancel it first")
        if acp_s is None:
            store, _ = await self._ready()
            from picobot_tui.core.sessions import SessionError

            try:
                key = store.normalize_key(session_id)
            except SessionError as e:
                raise _params_error(str(e), sessionId=session_id) from None
            if not store.exists(key):
                raise _params_error(f"no stored session {session_id!r}", sessionId=session_id)
            acp_s = await self._open(cwd, mcp_servers, key, session_id)
            self.sessions[session_id] = acp_s
        for update in history_updates(acp_s.session.messages, acp_s.cwd):
            await self.out.update(acp_s.id, update)
        return s.LoadSessionResponse(modes=self._modes(acp_s))

    @_tracked
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> s.ListSessionsResponse:
        store, book = await self._ready()
        try:
            offset = int(cursor or 0)
        except ValueError:
            raise _params_error(f"bad cursor {cursor!r}") from None
        where = await asyncio.to_thread(book.read)
        wanted = str(Path(cwd).resolve()) if cwd else None
        infos = await asyncio.to_thread(store.list)
        rows = [
            (i, where[i.key])
            for i in infos
            if i.key in where and (wanted is None or where[i.key] == wanted)
        ]
        page = rows[offset : offset + PAGE]
        return s.ListSessionsResponse(
            sessions=[
                s.SessionInfo(
                    session_id=i.key,
                    cwd=c,
                    title=label(i.title) or None,
                    updated_at=i.updated or None,
                )
                for i, c in page
            ],
            next_cursor=str(offset + PAGE) if offset + PAGE < len(rows) else None,
        )

    @_tracked
    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> s.SetSessionModeResponse | None:
        acp_s = self._get(session_id)
        if mode_id not in MODES:
            raise _params_error(
                f"unknown mode {mode_id!r}: use one of {', '.join(MODES)}", modeId=mode_id
            )
        acp_s.set_mode(mode_id)
        await self.out.update(
            acp_s.id,
            s.CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id),
        )
        return s.SetSessionModeResponse()

    # -- a turn -----------------------------------------------------------------------------
    @_tracked
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> s.PromptResponse:
        acp_s = self._get(session_id)
        if acp_s.running:
            raise rpc_error(
                BUSY,
                f"session {session_id!r} is still answering a prompt: wait for its answer or send session/cancel",
            )
        acp_s.cancelling = False
        task = asyncio.get_running_loop().create_task(
            run_prompt(self.out, self.warmup, acp_s, prompt)
        )
        acp_s.task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the connection is closing
                task.cancel()
                raise
            # A session/cancel that came before the turn's first step: it never ran.
            return s.PromptResponse(stop_reason="cancelled")
        finally:
            if task.done():
                acp_s.task = None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        acp_s = self.sessions.get(session_id)
        if acp_s is None:
            log.warning("session/cancel for unknown session %r ignored", session_id)
            return
        if acp_s.running:
            acp_s.cancelling = True
            assert acp_s.task is not None
            acp_s.task.cancel()

    # -- the end ----------------------------------------------------------------------------
    async def shutdown(self) -> None:
        """Cancel every running turn (each records what is true), then close the sessions
        and their MCP servers."""
        await asyncio.sleep(0)  # requests read just before the end start (and are tracked)
        running = [a for a in self.sessions.values() if a.running]
        for acp_s in running:
            acp_s.cancelling = True
            assert acp_s.task is not None
            acp_s.task.cancel()
        if running:
            await asyncio.gather(
                *(a.task for a in running if a.task is not None), return_exceptions=True
            )
        inflight = [t for t in self._inflight if t is not asyncio.current_task()]
        if inflight:
            await asyncio.wait(inflight, timeout=DRAIN_S)
        for acp_s in {id(a): a for a in self.sessions.values()}.values():
            await acp_s.close()
        self.sessions.clear()


async def _serve(agent: PicobotAgent, protocol_fd: int) -> None:
    transport = StdioTransport(0, protocol_fd)
    conn = AgentSideConnection(cast("Agent", agent), transport, listening=False)
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if inherited.is_ignored(sig):  # e.g. under nohup: kept ignored (run/inherited.py)
            continue
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, main.cancel if main is not None else (lambda: None))
    try:
        await conn.listen()
    except asyncio.CancelledError:
        uncancel()
    finally:
        agent.out.disconnected = agent.out.disconnected or transport.closed
        await agent.shutdown()
        with contextlib.suppress(Exception):
            await conn.close()


def run_acp(protocol_fd: int, *, logs: bool = False) -> int:
    """Serve ACP on stdin and `protocol_fd` (the real stdout, see stdout_guard) until the
    client closes stdin; 0 once every session is saved and closed."""
    agent = PicobotAgent(logs=logs)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(agent, protocol_fd))
    if agent.warmup.loading:
        # Every session is closed and saved; only the background `import litellm` runs. An
        # interpreter ending while a thread imports aborts ("exception not rethrown"), and
        # waiting for it would keep the client waiting seconds: leave at once.
        logging.shutdown()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(0)
    return 0

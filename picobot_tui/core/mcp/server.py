"""One MCP server: the task that owns its connection, its state, and the calls made on it.

AnyIO cancel scopes must be exited by the task that entered them, so the SDK's `Client`
context is entered and left by one owner task per server, never by a turn's worker; calls
only borrow the connected client. A caller cancelled mid-call (Esc) cancels the request, and
the SDK sends the protocol's `notifications/cancelled`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from picobot_tui.core.mcp.launch import LaunchRefused, plan_stdio
from picobot_tui.core.mcp.schema import schema_problem
from picobot_tui.core.mcp.stderr import StderrCopy
from picobot_tui.core.paths import mcp_cwd
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.textsafe import terminal_safe
from picobot_tui.core.tools.base import ToolError

log = logging.getLogger("picobot.mcp")

State = Literal["connecting", "connected", "failed", "closed", "off"]
"""`off`: never started, by decision (an untrusted workspace); `error` says why."""

HANDSHAKE_LIMIT = 60.0
"""Seconds a connection attempt may take before the server is marked failed. A turn waits
for at most tools.mcpConnectTimeout; a slower server joins later, up to this."""
CLOSE_LIMIT = 6.0
"""Seconds `close` waits for the owner: the SDK closes stdin, waits 2 s, sends SIGTERM to
the server's process group and SIGKILL 2 s later (mcp/client/stdio.py)."""
STDERR_DRAIN = 1.0
"""Seconds an ended connection waits for the server's stderr to reach its end (it does as
the process exits, unless a child of it holds the pipe), so its last lines are logged and
can be shown with the error."""
_LIST_PAGES = 50


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    """The server marks the tool `readOnlyHint` (its annotations): it runs in plan mode."""


def load_sdk() -> None:
    """Import what the owner uses (~0.9 s): callers run this in a thread."""
    import jsonschema  # noqa: F401  (each listed tool's inputSchema is checked)
    import mcp.client.sse  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401
    from mcp import Client  # noqa: F401


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("picobot-tui")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "0"


class _Refused(Exception):
    """An HTTP server answered the connection with an error status (its message is the
    reason shown as is: the SDK only says "Server returned an error response")."""


def _describe(exc: BaseException) -> str:
    """A one-line reason from whatever the SDK or a transport raised."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, _Refused | LaunchRefused):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = " ".join(str(exc).split())
    if text.lower() == "connection closed":  # the SDK's MCPError when the process ended
        return "the server closed the connection during the handshake (it exited)"
    # The words only: a class name (MCPError, ConnectError) tells a user nothing.
    return text or f"no reason given ({type(exc).__name__})"


TAIL_SHOWN = 3
"""Lines of a failed server's stderr shown with its error (the log keeps the last 20)."""


def with_stderr(reason: str, tail: list[str], log_path: Path | None) -> str:
    """`reason`, the last lines the server wrote on stderr, and where the rest is: the
    cause is usually there (a TLS error, a missing module), not in the protocol's words."""
    where = str(log_path) if log_path is not None else "picobot.log"
    if not tail:  # never started (command not found), or silent: nothing to point at
        return reason
    lines = " / ".join(f"«{line[:300]}»" for line in tail[-TAIL_SHOWN:])
    return f"{reason}; its stderr ended with: {lines} (all of it: {where})"


class McpServer:
    """A configured server: connect, list tools, call them, reconnect once after a drop."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        workspace: Path,
        on_change: Callable[[McpServer], None] | None = None,
        handshake_limit: float = HANDSHAKE_LIMIT,
        default_cwd: Path | None = None,
        scrub: Callable[[str], str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.name = name
        self.log_path = log_path
        """The log file its stderr is copied to, named with its errors."""
        self.config = config
        self.workspace = workspace
        self.default_cwd = default_cwd or mcp_cwd()
        """Where a stdio server runs when its config names no `cwd` (core/mcp/launch.py)."""
        self.scrub = scrub or (lambda text: text)
        self.on_change = on_change
        self.handshake_limit = handshake_limit
        self.state: State = "connecting"
        self.error: str | None = None
        self.tools: list[ToolSpec] = []
        self.unknown_enabled: list[str] = []
        """enabledTools entries the server does not list (shown in the status)."""
        self.connect_ms: float | None = None
        self.protocol: str | None = None
        """The protocol revision negotiated (2026-07-28 by discovery, or an older one by the
        `initialize` handshake: the SDK's auto mode speaks both eras)."""
        self.transport_used: str = config.transport
        self.stderr_tail: list[str] = []
        """The last lines of the server's stderr when its last connection ended (scrubbed)."""
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._wake = asyncio.Event()
        self._retry = False
        self._stopping = False

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the owner task (in the running loop); the SDK must be imported already."""
        if self._task is None and self.state != "off":
            self._task = asyncio.create_task(self._own(), name=f"mcp-{self.name}")

    def hold(self, reason: str) -> None:
        """Never start (before `start`): the server is `off`, `reason` its error."""
        if self._task is None:
            self._set("off", reason)

    async def wait_ready(self, timeout: float) -> bool:
        """Wait until the current attempt ends; True when connected."""
        if not self._ready.is_set():
            with suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout)
        return self.state == "connected"

    @property
    def settled(self) -> bool:
        """The current attempt has ended (connected or failed)."""
        return self._ready.is_set()

    async def close(self) -> None:
        """Disconnect; a stdio server's process is ended (stdin closed, then killed)."""
        self._stopping = True
        self._wake.set()
        task = self._task
        if task is None:
            if self.state != "off":
                self._set("closed")
            return
        if self.state == "connecting":  # nothing to finish: stop waiting for the handshake
            task.cancel()
        # asyncio.wait, not wait_for: the owner's own end (cancelled, failed) is not ours.
        done, _ = await asyncio.wait({task}, timeout=CLOSE_LIMIT)
        if not done:
            log.warning("MCP server %s: no clean close in %g s; cancelling", self.name, CLOSE_LIMIT)
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_LIMIT)
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.warning("MCP server %s: closing failed: %s", self.name, task.exception())
        if self.state != "closed":
            self._client = None
            self._set("closed", self.error)

    def _set(self, state: State, error: str | None = None) -> None:
        self.state, self.error = state, error
        # A call that asked for a reconnect waits for that attempt: the dropped connection's
        # own end ("failed", as its owner finishes closing it) must not wake it first.
        if state in ("connected", "closed", "off") or (state == "failed" and not self._retry):
            self._ready.set()
        else:
            self._ready.clear()
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # a display problem must not end the connection
                log.exception("MCP status listener failed")

    async def _own(self) -> None:
        while not self._stopping:
            self._retry = False
            await self._connect_once()
            if self._stopping:
                break
            while not (self._retry or self._stopping):  # failed: wait for a call to ask again
                self._wake.clear()
                await self._wake.wait()
        self._client = None
        self._set("closed", self.error)

    async def _connect_once(self) -> None:
        import anyio

        self._set("connecting")
        t0 = time.monotonic()
        closed = asyncio.Event()
        stderr = StderrCopy(self.name) if self.config.transport == "stdio" else None
        lost: str | None = None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.handshake_limit) as scope:
                async with AsyncExitStack() as stack:
                    client = await self._enter(stack, closed, stderr)
                    if stderr is not None:
                        stderr.close()  # the process has its copy
                    await self._list_tools(client)
                    scope.deadline = math.inf  # connected: no limit on how long it stays
                    self.connect_ms = round((time.monotonic() - t0) * 1000, 1)
                    self.protocol = getattr(client.session, "protocol_version", None)
                    self._client = client
                    self._set("connected")
                    log.info(
                        "MCP server %s connected (%s) in %.0f ms: %d tools",
                        self.name,
                        self.transport_used,
                        self.connect_ms,
                        len(self.tools),
                    )
                    while not (
                        self._stopping or self._retry or closed.is_set() or self._client is None
                    ):
                        self._wake.clear()
                        await self._wake.wait()
                    if self.state == "failed":  # a call saw the connection go (_lost)
                        lost = self.error
                    elif closed.is_set() and not self._stopping:
                        lost = "the server closed the connection (it exited or dropped)"
                    self._client = None
            if scope.cancelled_caught:
                lost = f"no answer to the handshake within {self.handshake_limit:g} s"
        except asyncio.CancelledError:
            self._client = None
            raise
        except BaseException as e:  # the SDK raises groups, OSError, MCPError, httpx errors
            lost = _describe(e)
        finally:
            if stderr is not None:
                stderr.close()
        self._client = None
        if stderr is not None:
            await asyncio.to_thread(stderr.wait_closed, STDERR_DRAIN)
            self.stderr_tail = [self.scrub(terminal_safe(line)) for line in stderr.tail()]
        if lost is not None:
            lost = with_stderr(lost, self.stderr_tail, self.log_path)
            log.warning("MCP server %s failed: %s", self.name, lost)
            self._set("failed", lost)

    async def _enter(
        self, stack: AsyncExitStack, closed: asyncio.Event, stderr: StderrCopy | None
    ) -> Any:
        from mcp import Client
        from mcp_types import Implementation

        info = Implementation(name="picobot", version=_version())
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert stderr is not None
            launch = plan_stdio(config, self.workspace, self.default_cwd)
            log.info(
                "MCP server %s: starting %s in %s%s",
                self.name,
                launch.command,
                launch.cwd,
                "" if launch.explicit_cwd else " (no cwd set: not the workspace)",
            )
            params = StdioServerParameters(
                command=launch.command, args=launch.args, env=launch.env, cwd=str(launch.cwd)
            )
            transport = stdio_client(params, errlog=stderr.file)
            return await stack.enter_async_context(
                Client(_watched(transport, closed, self._wake), client_info=info)
            )
        assert config.url
        if config.transport == "sse":
            return await self._enter_sse(stack, closed, info)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await stack.enter_async_context(create_mcp_http_client(headers=config.headers))
        refused: list[Any] = []  # the first response with an error status, for the reason

        async def note(response: Any) -> None:
            if response.status_code >= 400 and not refused:
                refused.append(response)

        http.event_hooks = {**http.event_hooks, "response": [note]}
        transport = streamable_http_client(config.url, http_client=http)
        try:
            return await stack.enter_async_context(
                Client(_watched(transport, closed, self._wake), client_info=info)
            )
        except Exception as e:
            status = refused[0].status_code if refused else None
            if status in (401, 403):  # the credentials: SSE would be refused the same way
                answer = f"HTTP {status} {getattr(refused[0], 'reason_phrase', '')}".strip()
                raise _Refused(
                    f"{answer} from {config.url}: the server refused the request (check the "
                    "server's `headers`, e.g. Authorization)"
                ) from e
            if config.type is not None:  # `"type": "http"`: no guessing
                if status is not None:
                    raise _Refused(f"HTTP {status} from {config.url}") from e
                raise
            http_error = f"HTTP {status}" if status is not None else _describe(e)
            log.info(
                "MCP server %s: Streamable HTTP failed (%s); trying SSE", self.name, http_error
            )
        closed.clear()  # the failed attempt's streams ended: that is not the SSE connection's end
        try:
            return await self._enter_sse(stack, closed, info)
        except Exception as e:  # neither spoke: say what each attempt got
            self.transport_used = "http"
            raise _Refused(f"Streamable HTTP: {http_error}; SSE: {_describe(e)}") from e

    async def _enter_sse(self, stack: AsyncExitStack, closed: asyncio.Event, info: Any) -> Any:
        from mcp import Client
        from mcp.client.sse import sse_client

        assert self.config.url
        self.transport_used = "sse"
        transport = sse_client(self.config.url, headers=self.config.headers or None)
        return await stack.enter_async_context(
            Client(_watched(transport, closed, self._wake), client_info=info)
        )

    async def _list_tools(self, client: Any) -> None:
        specs: list[ToolSpec] = []
        cursor = None
        for _ in range(_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                problem = schema_problem(schema)
                if problem is not None:  # the server's other tools still work
                    log.warning(
                        "MCP server %s: tool %s is not offered: %s", self.name, tool.name, problem
                    )
                    continue
                hint = getattr(tool.annotations, "read_only_hint", None) is True
                specs.append(ToolSpec(tool.name, tool.description or "", schema, hint))
            cursor = page.next_cursor
            if not cursor:
                break
        enabled = self.config.enabled_tools
        if enabled is not None:
            listed = {s.name for s in specs}
            self.unknown_enabled = [n for n in enabled if n not in listed]
            specs = [s for s in specs if s.name in enabled]
        self.tools = specs

    # -- calls -----------------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any], connect_timeout: float) -> Any:
        """Call `tool`; returns the SDK's CallToolResult. Raises ToolError with a clear reason
        (not connected, dropped mid-call, timed out, refused). A failed server gets one
        reconnect attempt per call."""
        client = self._client
        if client is None and self.state == "off":
            raise ToolError(f"MCP server `{self.name}` is not started: {self.error}")
        if client is None:
            if self.state == "failed" and not self._stopping:
                log.info("MCP server %s: reconnecting for a call", self.name)
                self._retry = True
                self._ready.clear()
                self._wake.set()
            await self.wait_ready(connect_timeout)
            client = self._client
            if client is None:
                why = self.error or f"still {self.state}"
                raise ToolError(f"MCP server `{self.name}` is not connected: {why}")
        timeout = self.config.tool_timeout
        try:
            return await client.call_tool(tool, args, read_timeout_seconds=timeout)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            raise self._call_error(tool, timeout, e) from None

    def _call_error(self, tool: str, timeout: float, exc: Exception) -> ToolError:
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT:
            return ToolError(
                f"`{tool}` on MCP server `{self.name}` did not answer within {timeout:g} s "
                "(toolTimeout); the call was cancelled"
            )
        dropped = isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError) or (
            isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED
        )
        if dropped:
            self._lost("the server closed the connection during a call")
            return ToolError(
                f"MCP server `{self.name}` closed the connection during `{tool}` (it exited or "
                "dropped); the next call tries to reconnect"
            )
        if isinstance(exc, MCPError):
            return ToolError(f"MCP server `{self.name}` refused `{tool}`: {exc.error.message}")
        return ToolError(f"`{tool}` on MCP server `{self.name}` failed: {_describe(exc)}")

    def _lost(self, why: str) -> None:
        if self.state == "connected":
            self._client = None
            self._set("failed", why)
            self._wake.set()


@asynccontextmanager
async def _watched(
    transport: Any, closed: asyncio.Event, wake: asyncio.Event
) -> AsyncIterator[Any]:
    """The transport's streams, with `closed` (and `wake`) set when the server's side ends:
    a server that exits while idle is marked failed at once, not at the next call."""
    import anyio

    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            try:
                async with send:
                    async for item in read:
                        await send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                pass
            finally:
                closed.set()
                wake.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            try:
                yield receive, write
            finally:
                tg.cancel_scope.cancel()

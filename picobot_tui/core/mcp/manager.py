"""All configured MCP servers: started together, their tools put in the registry as each
connects, a wait before the first turn bounded by tools.mcpConnectTimeout, and one close."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from picobot_tui.core.mcp.names import crosses, plain_name, sanitize, server_prefix
from picobot_tui.core.mcp.server import McpServer, _describe, load_sdk
from picobot_tui.core.mcp.tool import McpTool
from picobot_tui.core.shapes.mcp_server import McpServerConfig
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.visible import label

log = logging.getLogger("picobot.mcp")


@dataclass(frozen=True)
class ServerStatus:
    """What `/mcp` and `picobot mcp list` show of one server."""

    name: str
    transport: str
    state: str
    error: str | None
    tools: tuple[str, ...]
    connect_ms: float | None
    trust: str
    unknown_enabled: tuple[str, ...] = ()
    protocol: str | None = None
    stderr_tail: tuple[str, ...] = ()
    """The last lines of its stderr when its connection ended (scrubbed)."""


class McpManager:
    """The servers of one run. `start` needs a running loop; `close` ends every process."""

    def __init__(
        self,
        servers: dict[str, McpServerConfig],
        *,
        workspace: Path,
        registry: ToolRegistry | None,
        connect_timeout: float,
        scrub: Callable[[str], str] | None = None,
        log_path: Path | None = None,
        default_cwd: Path | None = None,
    ) -> None:
        self.registry = registry
        self.connect_timeout = connect_timeout
        self.servers = {
            name: McpServer(
                name,
                config,
                workspace=workspace,
                on_change=self._changed,
                scrub=scrub,
                log_path=log_path,
                default_cwd=default_cwd,
            )
            for name, config in servers.items()
        }
        self.held: str | None = None
        """Why no server starts (an untrusted workspace), else None."""
        self.listeners: list[Callable[[], None]] = []
        """Called (in the loop) whenever a server's state changes: the TUI's status bar."""
        self._started: asyncio.Task[None] | None = None
        self._start_time = 0.0
        self._waited = False
        self._offered: dict[str, list[str]] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def hold(self, reason: str) -> None:
        """Start no server, ever (call it before `start`): an untrusted workspace. Each is
        `off`, with `reason` as its error, in `/mcp` and `picobot mcp list`."""
        self.held = reason
        for server in self.servers.values():
            server.hold(reason)

    def start(self) -> None:
        """Import the SDK in a thread, then connect every server concurrently."""
        if self._started is None and self.servers and self.held is None:
            self._start_time = time.monotonic()
            self._started = asyncio.create_task(self._start(), name="mcp-start")

    async def _start(self) -> None:
        try:
            await asyncio.to_thread(load_sdk)
        except Exception as e:  # a broken install: every server fails with the reason
            for server in self.servers.values():
                server._set("failed", f"the mcp package cannot be loaded: {_describe(e)}")
            return
        for server in self.servers.values():
            server.start()

    async def wait_ready(self, timeout: float | None = None) -> list[str]:
        """Wait until every server has connected or failed, at most `timeout` seconds from
        the start (default tools.mcpConnectTimeout); returns the names still connecting."""
        self.start()
        limit = self.connect_timeout if timeout is None else timeout
        deadline = self._start_time + limit
        if self._started is not None:
            try:
                await asyncio.wait_for(
                    asyncio.shield(self._started), max(0.0, deadline - time.monotonic())
                )
            except TimeoutError:
                return [n for n, s in self.servers.items() if not s.settled]
        pending = [s for s in self.servers.values() if not s.settled]
        if pending:
            left = max(0.0, deadline - time.monotonic())
            await asyncio.wait([asyncio.ensure_future(s.wait_ready(left)) for s in pending])
        return [n for n, s in self.servers.items() if not s.settled]

    async def ready_for_turn(self) -> str | None:
        """The loop's hook before a turn: the first turn waits (bounded) for the servers.
        Returns a notice naming the stragglers and the failed ones, once."""
        if self._waited or not self.servers:
            return None
        self._waited = True
        waiting = await self.wait_ready()
        failed = [s for s in self.servers.values() if s.state == "failed"]
        parts = []
        if waiting:
            names = ", ".join(f"`{n}`" for n in waiting)
            parts.append(
                f"MCP: going on without {names}, still connecting after "
                f"{self.connect_timeout:g} s (tools.mcpConnectTimeout); their tools join when "
                "they connect."
            )
        for server in failed:
            # The error may quote the server's own stderr: a status line, controls visible.
            parts.append(label(f"MCP server `{server.name}` failed: {server.error}"))
        return "\n".join(parts) or None

    async def close(self) -> None:
        """Disconnect all servers at once; stdio processes are ended."""
        if self._started is not None and not self._started.done():
            self._started.cancel()
            await asyncio.gather(self._started, return_exceptions=True)
        await asyncio.gather(*(s.close() for s in self.servers.values()))

    # -- tools and state -------------------------------------------------------------------
    def _changed(self, server: McpServer) -> None:
        if server.state == "connected":
            self._offer(server)
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:
                log.exception("MCP listener failed")

    def _offer(self, server: McpServer) -> None:
        """Put the server's tools in the registry (replacing what it offered before)."""
        if self.registry is None:
            return
        for name in self._offered.pop(server.name, []):
            self.registry.remove(name)
        taken = set(self.registry.names())
        shadowed = self._shadowed(server.name)
        names = []
        for spec in server.tools:
            # A server named like an earlier one once sanitised ("t!" after "t") always
            # takes the hashed names, and so does a tool whose plain name another server's
            # could have (`a`'s `b_c` beside `a_b`'s `c`): which name means which server
            # must not depend on which of them connected first (an "always" rule saved for
            # one would allow the other).
            ambiguous = shadowed or crosses(server.name, spec.name, self.servers)
            reserved = taken | {plain_name(server.name, spec.name)} if ambiguous else taken
            tool = McpTool(server, spec, reserved, self.connect_timeout)
            taken.add(tool.name)
            self.registry.add(tool)
            names.append(tool.name)
        self._offered[server.name] = names

    def _shadowed(self, server: str) -> bool:
        """Whether a server before this one in the config has the same sanitised name."""
        mine = sanitize(server)
        for name in self.servers:
            if name == server:
                return False
            if sanitize(name) == mine:
                return True
        return False

    def tool_names(self, server: str) -> list[str]:
        """The model-facing names of a server's tools."""
        return list(self._offered.get(server, []))

    def statuses(self) -> list[ServerStatus]:
        return [
            ServerStatus(
                name=s.name,
                transport=s.transport_used,
                state=s.state,
                error=s.error,
                tools=tuple(t.name for t in s.tools),
                connect_ms=s.connect_ms,
                trust=s.config.trust,
                unknown_enabled=tuple(s.unknown_enabled),
                protocol=s.protocol,
                stderr_tail=tuple(s.stderr_tail),
            )
            for s in self.servers.values()
        ]

    def summary(self) -> str:
        """`mcp 2/3`: connected of configured ("" with none configured)."""
        if not self.servers:
            return ""
        if self.held is not None:
            return "mcp off"
        up = sum(1 for s in self.servers.values() if s.state == "connected")
        return f"mcp {up}/{len(self.servers)}"

    def find(self, server: str) -> McpServer | None:
        return self.servers.get(server)

    @staticmethod
    def prefix(server: str) -> str:
        return server_prefix(server)

"""One ACP session: a picobot Session with its own Runtime (settings read for it, its
workspace the client's `cwd`, its loop, tools, budget and MCP connections: the configured
servers and the client's), the turn running in it, its mode, and the recorded cwd.

Each session loads the config afresh, so a mode (`read-only`), an MCP server the client
passed or a workspace never leaks into another session of the same process.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.acp.updates import ToolCalls, Usage
from picobot_tui.config.settings import Settings
from picobot_tui.core import json_input
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.sessions import Session
from picobot_tui.core.turn_state import SessionState
from picobot_tui.run.context import load_checked_settings
from picobot_tui.run.options import RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime

if TYPE_CHECKING:
    from picobot_tui.core.shapes.mcp_server import McpServerConfig

log = logging.getLogger("picobot.acp")

SOURCE = "acp"


@dataclass
class AcpSession:
    id: str
    cwd: Path
    settings: Settings
    runtime: Runtime
    session: Session
    mode: str = "default"
    base_approval: str = "ask"
    task: asyncio.Task[Any] | None = None
    """The prompt turn running now, if any (one at a time)."""
    cancelling: bool = False
    checked: bool = False
    """The model, its key and the token budget were checked (on the first prompt)."""
    calls: ToolCalls = field(init=False)
    usage: Usage = field(default_factory=Usage)
    allowed: SessionState = field(default_factory=lambda: SessionState(history=[]))
    """What "allow for this session" allowed (a mirror of the loop's, for the statuses)."""

    def __post_init__(self) -> None:
        self.calls = ToolCalls(self.cwd)
        self.base_approval = self.settings.tools.approval

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def set_mode(self, mode: str) -> None:
        from picobot_tui.run.runtime import set_plan

        self.mode = mode
        self.settings.tools.approval = "readonly" if mode == "read-only" else self.base_approval  # type: ignore[assignment]
        set_plan(self.runtime, mode == "plan")

    async def close(self) -> None:
        if self.runtime.mcp is not None:
            try:
                await self.runtime.mcp.close()
            except Exception as e:  # closing must never stop the others from closing
                log.warning("closing the MCP servers of %s: %s", self.id, e)
        self.runtime.loop.forget(self.session.key)
        self.session.close()


def session_settings(cwd: Path, client_servers: dict[str, McpServerConfig]) -> Settings:
    """The config read for one session: the workspace is `cwd`, the client's MCP servers
    join the configured ones (a client's server of the same name replaces it). RunError
    for a bad config or workspace."""
    settings, warnings = load_checked_settings(RunOptions(workspace=cwd))
    for w in warnings:
        log.warning("%s", w)
    if client_servers:
        servers = dict(settings.tools.mcp_servers)
        for name in client_servers:
            if name in servers:
                log.info("the client's MCP server %r replaces the configured one", name)
        servers.update(client_servers)
        settings.tools.mcp_servers = servers
    return settings


def build_session_runtime(settings: Settings, confirm: ConfirmFn) -> Runtime:
    return build_runtime(settings, model=settings.agents.defaults.model, confirm=confirm)


class CwdBook:
    """Which directory each ACP session works in (`session/list` reports and filters by
    it; picobot's session header does not record a workspace). A small JSON map in the
    data directory, rewritten atomically; a broken one is started afresh."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, str]:
        try:
            data = json_input.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        return (
            {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
            if isinstance(data, dict)
            else {}
        )

    def record(self, key: str, cwd: Path) -> None:
        book = self.read()
        if book.get(key) == str(cwd):
            return
        book[key] = str(cwd)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(book, indent=0).encode())
        except OSError as e:
            log.warning("could not record the workspace of %s: %s", key, e)

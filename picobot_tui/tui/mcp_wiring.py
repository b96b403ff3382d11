"""The TUI's MCP servers: started once the runtime is ready (after the first frame, in the
background), shown in the status bar as they change, listed by `/mcp`, and closed on every
way out of the app (quit, Ctrl+C, SIGTERM, a crash: the app's unmount awaits `close`).

Light on purpose: the app imports it for its first frame, and nothing here imports the `mcp`
SDK or `picobot_tui.core.mcp` at module level (the manager loads the SDK in a thread).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from picobot_tui.tui.view_events import McpShown, ViewEvent

if TYPE_CHECKING:
    from textual.app import App

    from picobot_tui.core.mcp.manager import McpManager
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.tui.exit_signals import ExitSignals


def tool_label(name: str, server: str) -> str:
    """How a call shows in the timeline and the conversation: `time › get_current_time` for
    `mcp_time_get_current_time` (the name the model used, without the server's prefix)."""
    from picobot_tui.core.mcp.names import server_prefix

    return f"{server} › {name.removeprefix(server_prefix(server)) or name}"


def status_event(manager: McpManager) -> McpShown:
    """The status bar's cell: `mcp 2/3`, coloured by the worst state (`mcp off`, muted, in
    an untrusted workspace)."""
    if manager.held is not None:
        return McpShown(manager.summary(), "off")
    states = {s.state for s in manager.servers.values()}
    state = "failed" if "failed" in states else "connecting" if "connecting" in states else ""
    return McpShown(manager.summary(), state or "connected")


def start(runtime: Runtime | None, show: Callable[[ViewEvent], object]) -> None:
    """Connect the runtime's servers in the background; `show` gets the status bar's cell
    (now, and on every change of a server's state)."""
    manager = runtime.mcp if runtime is not None else None
    if manager is None:
        return

    def changed() -> None:
        show(status_event(manager))

    manager.listeners.append(changed)
    changed()
    manager.start()


def start_after_paint(
    app: App[Any], runtime: Runtime | None, show: Callable[[ViewEvent], object]
) -> None:
    """`start`, once the loaded frame is painted: the SDK's import thread (~0.9 s) competing
    with that paint delayed it 60-250 ms (bench #12a, load 4-8 on 2 cores)."""
    if runtime is not None and runtime.mcp is not None:
        app.call_after_refresh(start, runtime, partial(app.call_later, show))


def show(app: App[Any], runtime: Runtime | None) -> None:
    """`/mcp` (and the palette's entry): the pane, kept live while it is open."""
    from picobot_tui.widgets.mcp_pane import McpPane

    manager = runtime.mcp if runtime is not None else None
    if manager is None:
        app.push_screen(McpPane([]))
        return
    pane = McpPane(manager.statuses())

    def changed() -> None:
        pane.statuses = tuple(manager.statuses())

    def closed(_: None) -> None:
        if changed in manager.listeners:
            manager.listeners.remove(changed)

    manager.listeners.append(changed)
    app.push_screen(pane, closed)


async def close(runtime: Runtime | None, signals: ExitSignals) -> None:
    """End every server (stdio processes are terminated, then killed). Further SIGTERM or
    SIGINT are ignored meanwhile: a second one must not end picobot before its servers."""
    manager = runtime.mcp if runtime is not None else None
    if manager is None:
        return
    signals.hold()
    manager.listeners.clear()  # the panes are going
    await manager.close()

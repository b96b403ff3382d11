"""`/mcp`: the configured MCP servers, one entry each: transport, state (connecting,
connected with the time it took, failed with the error), trust, and the tools it offers.

The screen only shows what it is given: set `statuses` (a list of the core's `ServerStatus`)
and it redraws, so the caller can keep it live while it is open. Esc closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Static

from picobot_tui.core.visible import label

from .block_text import format_duration

if TYPE_CHECKING:
    from picobot_tui.core.mcp.manager import ServerStatus

STATE_LOOK = {
    "connected": ("●", "$text-success"),
    "connecting": ("◌", "$text-muted"),
    "failed": ("✗", "bold $text-error"),
    "closed": ("○", "$text-muted"),
    "off": ("○", "$text-warning"),
}
EMPTY = "No MCP servers configured: add them under tools.mcpServers in config.json."


def server_text(status: ServerStatus) -> Content:
    """One server's entry: a header line, then its error, or its tools."""
    icon, style = STATE_LOOK.get(status.state, ("?", ""))
    state = status.state
    if status.state == "connected" and status.connect_ms is not None:
        state = f"connected in {format_duration(status.connect_ms)}"
    elif status.state == "connecting":
        state = "connecting…"
    parts: list[str | tuple[str, str]] = [
        (f"{icon} ", style),
        (label(status.name), "bold"),
        ("  ", ""),
        (status.transport, "$text-muted"),
        ("  ", ""),
        (state, style),
        (f"  trust {status.trust}", "$text-muted"),
    ]
    if status.error:
        look = "$text-warning" if status.state == "off" else "$text-error"
        parts += ["\n    ", (label(status.error), look)]
    if status.tools:
        count = f"{len(status.tools)} tool" + ("s" if len(status.tools) != 1 else "")
        names = ", ".join(label(t) for t in status.tools)
        parts += ["\n    ", (f"{count}: ", "$text-muted"), names]
    elif status.state == "connected":
        parts += ["\n    ", ("no tools", "$text-muted")]
    if status.unknown_enabled:
        missing = ", ".join(label(t) for t in status.unknown_enabled)
        parts += ["\n    ", (f"enabledTools not listed by the server: {missing}", "$text-warning")]
    return Content.assemble(*parts)


class McpPane(ModalScreen[None]):
    """The servers' statuses; `statuses` may change while it is open (styles/app.tcss)."""

    BINDINGS: ClassVar = [Binding("escape,q", "close", "Close")]

    statuses: reactive[tuple[ServerStatus, ...]] = reactive((), init=False)

    def __init__(self, statuses: Sequence[ServerStatus]) -> None:
        super().__init__(classes="mcp")
        self.set_reactive(McpPane.statuses, tuple(statuses))
        self._composed = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="mcp-dialog"):
            yield Static(id="mcp-title")
            yield Vertical(id="mcp-servers")

    async def on_mount(self) -> None:
        self._composed = True
        await self._show()

    async def watch_statuses(self) -> None:
        await self._show()

    def _title(self) -> Content:
        up = sum(1 for s in self.statuses if s.state == "connected")
        counts = f"  {up}/{len(self.statuses)} connected" if self.statuses else ""
        return Content.assemble(
            ("MCP servers", "bold"), (counts, ""), ("  Esc close", "$text-muted")
        )

    async def _show(self) -> None:
        if not self._composed:  # set before the screen was mounted: on_mount shows it
            return
        self.query_one("#mcp-title", Static).update(self._title())
        box = self.query_one("#mcp-servers", Vertical)
        shown = list(box.query(".mcp-server").results(Static))
        if not self.statuses:
            await box.remove_children()
            await box.mount(Static(EMPTY, id="mcp-empty"))
            return
        if len(shown) != len(self.statuses):
            await box.remove_children()
            shown = [Static(classes="mcp-server") for _ in self.statuses]
            await box.mount_all(shown)
        for widget, status in zip(shown, self.statuses, strict=True):
            widget.update(server_text(status))

    def action_close(self) -> None:
        self.dismiss(None)

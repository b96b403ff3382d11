"""The header line: model, session id, agent state (and a budget summary when narrow), the
MCP servers' cell (`mcp 2/3`, when any is configured), "read-only" in an untrusted workspace,
and a warning when exec runs without its sandbox."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

STATE_STYLES = {
    "idle": "$text-success",
    "thinking": "$text-accent",
    "running tool": "$text-warning",
    "retrying": "$text-warning",
    "waiting for approval": "bold $text-error",
    "compacting": "$text-accent",
    "starting": "$text-muted",
}
MCP_STYLES = {
    "connected": "$text-success",
    "connecting": "$text-muted",
    "failed": "bold $text-error",
    "off": "$text-muted",
}
"""The MCP cell's colour: a failed server shows (with a ✗) until it reconnects."""


class StatusBar(Widget):
    """Set `model`, `session`, `state`, `mode`, `budget_summary`, `mcp` (with `mcp_state`),
    `cache` (with `cache_state`), `read_only` and `exec_note`; it redraws."""

    model: reactive[str] = reactive("")
    session: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    budget_summary: reactive[str] = reactive("")
    show_budget: reactive[bool] = reactive(False)
    """Shown when the side panes are collapsed (narrow terminals)."""
    mode: reactive[str] = reactive("")
    """"plan" in plan mode (a cell beside the state, at every width); "" otherwise."""
    read_only: reactive[bool] = reactive(False)
    """The workspace is not trusted: tools are read-only for the whole run (the notice that
    says so scrolls away; this stays)."""
    exec_note: reactive[str] = reactive("")
    """A warning about exec's sandbox ("exec unsandboxed"); empty when it is sandboxed."""
    mcp: reactive[str] = reactive("")
    """`mcp 2/3`: connected of configured MCP servers ("" with none configured: no cell)."""
    cache: reactive[str] = reactive("")
    """The prompt cache's cell (`cache 3:41 · saved $0.0123`, tui/cache_clock.py); "" for
    none."""
    cache_state: reactive[str] = reactive("")
    """"warm" or "cold" (the next call writes the prefix again)."""
    mcp_state: reactive[str] = reactive("connecting")
    """"connecting", "connected" (all settled, none failed), "failed" (any failed) or "off"
    (none started: an untrusted workspace)."""

    def render(self) -> Content:
        dot = "●" if self.state == "idle" else "◆"
        compact = self.show_budget  # narrow terminal: keep everything on one line
        session = self.session or "–"
        parts: list[str | tuple[str, str]] = []
        if not compact:
            parts += [(" picobot ", "bold reverse $primary"), "  "]
        else:
            session = session.split("-")[0]
        parts += [
            (self.model, "bold"),
            ("  " if compact else "  session ", "$text-muted"),
            (session, ""),
            "  ",
            (f"{dot} {self.state}", STATE_STYLES.get(self.state, "")),
        ]
        if self.mode:
            parts += ["  ", (f" {self.mode} mode ", "bold reverse $accent")]
        if compact and self.budget_summary:
            parts += ["  ", (self.budget_summary, "$text-muted")]
        if self.mcp:
            failed = self.mcp_state == "failed"
            cell = f"{self.mcp} ✗" if failed else self.mcp
            parts += ["  ", (cell, MCP_STYLES.get(self.mcp_state, ""))]
        if self.cache:
            style = "bold $text-warning" if self.cache_state == "cold" else "$text-muted"
            parts += ["  ", (self.cache, style)]
        if self.read_only:
            parts += ["  ", ("read-only", "bold reverse $warning")]
        if self.exec_note:
            parts += ["  ", (f"⚠ {self.exec_note}", "bold $text-warning")]
        return Content.assemble(*parts)

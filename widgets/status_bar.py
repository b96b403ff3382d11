"""The header line: model, session id, agent state (and a budget summary when narrow), and a
warning when exec runs without its sandbox."""

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


class StatusBar(Widget):
    """Set `model`, `session`, `state`, `budget_summary` and `exec_note`; it redraws."""

    model: reactive[str] = reactive("")
    session: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    budget_summary: reactive[str] = reactive("")
    show_budget: reactive[bool] = reactive(False)
    """Shown when the side panes are collapsed (narrow terminals)."""
    exec_note: reactive[str] = reactive("")
    """A warning about exec's sandbox ("exec unsandboxed"); empty when it is sandboxed."""

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
        if compact and self.budget_summary:
            parts += ["  ", (self.budget_summary, "$text-muted")]
        if self.exec_note:
            parts += ["  ", (f"⚠ {self.exec_note}", "bold $text-warning")]
        return Content.assemble(*parts)

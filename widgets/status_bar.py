"""The header line: model, session id, agent state (and a budget summary when narrow)."""

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
}


class StatusBar(Widget):
    """Set `model`, `session`, `state` and `budget_summary`; it redraws."""

    model: reactive[str] = reactive("")
    session: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    budget_summary: reactive[str] = reactive("")
    show_budget: reactive[bool] = reactive(False)
    """Shown when the side panes are collapsed (narrow terminals)."""

    def render(self) -> Content:
        dot = "●" if self.state == "idle" else "◆"
        parts: list[str | tuple[str, str]] = [
            (" picobot ", "bold reverse $primary"),
            "  ",
            (self.model, "bold"),
            ("  session ", "$text-muted"),
            (self.session or "–", ""),
            "  ",
            (f"{dot} {self.state}", STATE_STYLES.get(self.state, "")),
        ]
        if self.show_budget and self.budget_summary:
            parts += ["  ", (self.budget_summary, "$text-muted")]
        return Content.assemble(*parts)

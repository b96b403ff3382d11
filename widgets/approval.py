"""The approval modal: shows the command or diff a tool wants to run, and asks.

Dismisses with "allow", "allow_session", "always" or "deny".
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

CHOICES = (
    ("allow", "Allow once", "y"),
    ("allow_session", "Allow for session", "s"),
    ("always", "Always allow", "a"),
    ("deny", "Deny", "n"),
)


def diff_content(text: str) -> Content:
    """A unified diff coloured with theme variables (reads well in light and dark themes)."""
    parts: list[tuple[str, str]] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$text-accent"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        else:
            style = ""
        parts.append((line, style))
    return Content.assemble(*parts)


class ApprovalScreen(ModalScreen[str]):
    """Ask whether a tool call may run."""

    BINDINGS: ClassVar = [
        Binding("y", "choose('allow')", "Allow once"),
        Binding("s", "choose('allow_session')", "Allow for session"),
        Binding("a", "choose('always')", "Always allow"),
        Binding("n,escape", "choose('deny')", "Deny"),
    ]

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any], preview: str) -> None:
        super().__init__(classes="approval")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.preview = preview

    def _preview_renderable(self) -> Content:
        text = self.preview or ""
        if self.tool_name == "exec":
            # The exec preview is "$ command\n(in <dir>, timeout N s)".
            command, _, detail = text.removeprefix("$ ").partition("\n")
            return Content.assemble(
                ("$ ", "bold $text-muted"), (command, "bold"), ("\n" + detail if detail else "")
            )
        return diff_content(text)

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            yield Static(
                Content.assemble(
                    ("Allow ", "bold"),
                    (self.tool_name, "bold $text-warning"),
                    ("?", "bold"),
                    ("  the agent wants to ", "$text-muted"),
                    (
                        "run this command" if self.tool_name == "exec" else "make this change",
                        "$text-muted",
                    ),
                ),
                id="approval-title",
            )
            with VerticalScroll(id="approval-preview"):
                yield Static(self._preview_renderable(), id="approval-preview-body")
            with Horizontal(id="approval-buttons"):
                for value, label, key in CHOICES:
                    variant = {"allow": "primary", "deny": "error"}.get(value, "default")
                    yield Button(Content(f"{label} [{key}]"), id=f"choice-{value}", variant=variant)

    def on_mount(self) -> None:
        self.query_one("#choice-allow", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        value = (event.button.id or "").removeprefix("choice-")
        self.dismiss(value)

    def action_choose(self, value: str) -> None:
        self.dismiss(value)

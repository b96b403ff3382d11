"""The approval modal: shows the command or diff a tool wants to run, and asks.

Dismisses with "allow", "allow_session", "always" (for this workspace), "always_everywhere",
"deny", or a `Denied` carrying the reason typed in the reason line (`r` to type it, Enter to
deny). For web_fetch the session and "always" choices name the host; for exec "always" is the
offered rule (a command prefix, or the exact command), said exactly on the line above the
buttons with its scope (no rule offered: no "always"); for the file tools, the tool. A saved
rule that matched the command's first words but not the rest says why ("note: not covered
by …"). The preview is plain text (never markup; escapes arrive made visible by the core, and
their stand-ins are highlighted here). A write/edit diff is shown by `DiffView` (side by side
when wide, unified when narrow, highlighted by file type), and a change the checkpoints could
not undo says so above the buttons ("not undoable: …"). When the preview leaves something
out, a line says how much and `f` opens the whole text in a scrollable view.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea
from textual.widgets.button import ButtonVariant

from picobot_tui.core.approval import Denied
from picobot_tui.core.command_rules import COMMAND_TOOL, prefix_rule
from picobot_tui.core.visible import visible

from .diff_pane import DiffView, mark_stand_ins

DIFF_TOOLS = ("write_file", "edit_file")
"""Tools whose preview is a unified diff, shown with the diff view."""
NOT_UNDOABLE = "not undoable:"
"""How the checkpoints' line starts when a change cannot be undone (core/checkpoints/hook.py)."""

CHOICES = (
    ("allow", "Allow once", "y"),
    ("allow_session", "Allow for session", "s"),
    ("always", "Always here", "a"),
    ("always_everywhere", "Everywhere", "e"),
    ("deny", "Deny", "n"),
)
ALWAYS = ("always", "always_everywhere")
"""The answers that save a rule: for this workspace, or for every workspace."""


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


def choices(
    host: str | None, tool: str = "", rule: str | None = None
) -> tuple[tuple[str, str, str], ...]:
    """(value, label, key) of the buttons; per host for web_fetch (the title names the host:
    a long host name in every label would push "Deny" off a narrow dialog). exec offers
    "always" only with a rule (the line above the buttons names it and its scope)."""
    if host is None:
        if tool == COMMAND_TOOL and not rule:
            return tuple(c for c in CHOICES if c[0] not in ALWAYS)
        return CHOICES
    return (
        ("allow", "Allow once", "y"),
        ("allow_session", "Host for session", "s"),
        ("always", "Host always here", "a"),
        ("always_everywhere", "Everywhere", "e"),
        ("deny", "Deny", "n"),
    )


class FullPreviewScreen(ModalScreen[None]):
    """The whole preview text, read-only and scrollable (`f` in the approval modal)."""

    DEFAULT_CSS = """
    FullPreviewScreen { align: center middle; background: $background 60%; }
    #approval-full-dialog {
        width: 95%; height: 95%; border: thick $warning; background: $surface; padding: 0 1;
    }
    #approval-full-title { height: auto; margin-bottom: 1; }
    #approval-full-text { height: 1fr; }
    """
    BINDINGS: ClassVar = [Binding("escape,f,q", "close", "Close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__(classes="approval-full")
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-full-dialog"):
            yield Static(
                Content.assemble(
                    (self.title_text, "bold"), ("  (Esc or f to go back)", "$text-muted")
                ),
                id="approval-full-title",
            )
            yield TextArea(
                self.text,
                read_only=True,
                soft_wrap=True,
                show_line_numbers=True,
                id="approval-full-text",
            )

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class ApprovalScreen(ModalScreen[str | Denied]):
    """Ask whether a tool call may run."""

    DEFAULT_CSS = """
    #approval-hidden { height: auto; margin-top: 1; }
    #approval-not-undoable { height: auto; margin-top: 1; }
    #approval-always { height: auto; margin-top: 1; }
    #approval-note { height: auto; margin-top: 1; }
    /* Under 100 columns (the app's -narrow breakpoint) five buttons do not fit in a row:
       two columns, so none is cut off. */
    ApprovalScreen.-narrow #approval-buttons {
        layout: grid; grid-size: 2; grid-columns: 1fr 1fr; grid-gutter: 0 1; height: auto;
    }
    ApprovalScreen.-narrow #approval-buttons Button { width: 100%; margin: 0; }
    #approval-reason {
        height: 1; border: none; padding: 0 1; margin-top: 1; background: $panel;
    }
    #approval-reason:focus { border: none; background: $boost; }
    """

    BINDINGS: ClassVar = [
        Binding("y", "choose('allow')", "Allow once"),
        Binding("s", "choose('allow_session')", "Allow for session"),
        Binding("a", "choose('always')", "Always allow here"),
        Binding("e", "choose('always_everywhere')", "Always allow everywhere"),
        Binding("n,escape", "choose('deny')", "Deny"),
        Binding("r", "reason", "Deny with a reason"),
        Binding("f", "show_full", "Show everything"),
    ]

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        preview: str,
        *,
        full: str | None = None,
        hidden: str = "",
        host: str | None = None,
        prefix: str | None = None,
        rule: str | None = None,
        note: str = "",
        workspace: str = "",
    ) -> None:
        super().__init__(classes="approval")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.preview = preview
        self.full = full or preview
        self.hidden = hidden
        self.host = visible(host) if host is not None else None
        self.prefix = prefix if name == COMMAND_TOOL else None
        self.rule = None
        """exec's offered rule (the prefix's, or the exact command's), else None."""
        if name == COMMAND_TOOL:
            self.rule = rule or (prefix_rule(prefix) if prefix else None)
        self.note = note
        """Why a saved rule did not cover this call ("" when none matched)."""
        self.workspace = workspace
        """The workspace "Always here" saves for (the always line names it)."""
        first = (preview or "").partition("\n")[0]
        self.not_undoable = first if first.startswith(NOT_UNDOABLE) else ""
        """The checkpoints' warning that this change could not be undone ("" when it can)."""

    def _preview_renderable(self) -> Content:
        text = self.preview or ""
        if self.tool_name == "exec":
            # The exec preview is "$ command\n(in <dir>, timeout N s)".
            command, _, detail = text.removeprefix("$ ").partition("\n")
            content = Content.assemble(
                ("$ ", "bold $text-muted"), (command, "bold"), ("\n" + detail if detail else "")
            )
        else:
            content = diff_content(text)
        return mark_stand_ins(content)

    def _what(self) -> str:
        if self.host is not None:
            return f"fetch from {self.host}"
        if self.tool_name == "exec":
            return "run this command"
        return "make this change"

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog"):
            yield Static(
                Content.assemble(
                    ("Allow ", "bold"),
                    (self.tool_name, "bold $text-warning"),
                    ("?", "bold"),
                    ("  the agent wants to ", "$text-muted"),
                    (self._what(), "$text-muted"),
                ),
                id="approval-title",
            )
            with VerticalScroll(id="approval-preview"):
                if self.tool_name in DIFF_TOOLS:
                    # Side by side when wide, unified when narrow, highlighted by file type.
                    path = self.arguments.get("path")
                    # The "not undoable" line is said once, above the buttons.
                    text = (self.preview or "").removeprefix(self.not_undoable).lstrip("\n")
                    yield DiffView(
                        text,
                        path=path if isinstance(path, str) else None,
                        id="approval-preview-body",
                    )
                else:
                    yield Static(self._preview_renderable(), id="approval-preview-body")
            if self.not_undoable:
                yield Static(
                    Content.styled(self.not_undoable, "bold $text-warning"),
                    id="approval-not-undoable",
                )
            if self.hidden:
                yield Static(
                    Content.assemble(
                        (f"… {self.hidden} not shown", "bold $text-warning"),
                        ("  press ", "$text-muted"),
                        ("f", "bold"),
                        (" to see everything before you decide", "$text-muted"),
                    ),
                    id="approval-hidden",
                )
            if self.note:
                yield Static(
                    Content.assemble(("note: ", "bold $text-warning"), (self.note, "$text-muted")),
                    id="approval-note",
                )
            yield Static(self._always_line(), id="approval-always")
            with Horizontal(id="approval-buttons"):
                for value, label, key in self._choices():
                    variant: ButtonVariant = (
                        "primary" if value == "allow" else "error" if value == "deny" else "default"
                    )
                    yield Button(Content(f"{label} [{key}]"), id=f"choice-{value}", variant=variant)
            yield Input(
                placeholder="r: type a reason to deny (optional, the model reads it), Enter denies",
                max_length=500,
                id="approval-reason",
            )

    def _always_line(self) -> Content:
        """What "always" saves, exactly, and where: this workspace (a) or everywhere (e)."""
        muted = "$text-muted"
        here = (
            f" in this workspace ({visible(self.workspace)})"
            if self.workspace
            else " in this workspace"
        )
        scope = (
            (here, muted), ("\ne ", "bold"), ("the same in every workspace (config.json)", muted)
        )  # fmt: skip
        if self.host is not None:
            return Content.assemble(
                ("a ", "bold"), ("always allows web_fetch of ", muted),
                (self.host, "bold $text-warning"), *scope,
            )  # fmt: skip
        if self.tool_name != COMMAND_TOOL:
            return Content.assemble(
                ("a ", "bold"), ("always allows every ", muted), (self.tool_name, "bold"),
                (" call", muted), *scope,
            )  # fmt: skip
        if not self.rule:
            return Content.assemble(
                ("No rule could match this command, so nothing to always allow ", muted),
                ("(several commands, redirections, $(…) or variables)", muted),
            )
        if not self.prefix:
            return Content.assemble(
                ("a ", "bold"), ("always allows ", muted),
                ("exactly this command", "bold $text-warning"), *scope,
                (f"\n  saved as {visible(self.rule)}; a prefix is offered only for the "
                 "programs and options picobot has reviewed", muted),
            )  # fmt: skip
        return Content.assemble(
            ("a ", "bold"), ("always allows commands starting with ", muted),
            (visible(self.prefix), "bold $text-warning"), *scope,
            (f"\n  saved as {visible(self.rule)}; chained, piped, redirected or $(…) commands, "
             "and options that run programs or write files, still ask", muted),
        )  # fmt: skip

    def on_mount(self) -> None:
        self.query_one("#choice-allow", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        value = (event.button.id or "").removeprefix("choice-")
        self.action_choose(value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_choose("deny")

    def action_reason(self) -> None:
        self.query_one("#approval-reason", Input).focus()

    def action_choose(self, value: str) -> None:
        if value in ALWAYS and not any(c[0] == value for c in self._choices()):
            self.notify("No rule could match this command, so none is saved: y, s or n")
            return
        if value == "deny":
            reason = self.query_one("#approval-reason", Input).value.strip()
            self.dismiss(Denied(reason) if reason else "deny")
            return
        self.dismiss(value)

    def _choices(self) -> tuple[tuple[str, str, str], ...]:
        return choices(self.host, self.tool_name, self.rule)

    def action_show_full(self) -> None:
        what = f"{self.tool_name}: everything it would do"
        self.app.push_screen(FullPreviewScreen(what, self.full))

"""Slash commands and command-palette entries of the TUI, as data: each names an app
action (`PicobotApp.action_*`), which the app runs with `run_action`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from picobot_tui.widgets.prompt import SlashCommand

SLASH_COMMANDS: list[SlashCommand] = [
    SlashCommand("new", "", "start a new session"),
    SlashCommand("sessions", "", "browse, search and resume sessions"),
    SlashCommand("resume", "ID", "resume a session by id (or `latest`)"),
    SlashCommand("model", "[NAME]", "switch the model (no NAME: pick from a list)"),
    SlashCommand("plan", "", "plan mode on or off: only reading tools run (Shift+Tab)"),
    SlashCommand("compact", "", "compress the history now"),
    SlashCommand("export", "", "export this session to Markdown"),
    SlashCommand("copy", "", "copy the last answer (`/copy code`: its code)"),
    SlashCommand("clear", "", "clear the screen (the session is kept)"),
    SlashCommand("permissions", "", "list and remove the saved always-allow rules"),
    SlashCommand("mcp", "", "MCP servers: state, tools, errors, connect time"),
    SlashCommand("hooks", "", "the hooks that run, and where each is configured"),
    SlashCommand("context", "", "what the next call sends: files, tools, tokens"),
    SlashCommand("rewind", "", "undo to before a message (or Esc Esc)"),
    SlashCommand("diff", "[session]", "what this turn (or session) changed, per file"),
    SlashCommand("help", "", "show commands and keys"),
    SlashCommand("quit", "", "quit picobot"),
]

KEYS: list[tuple[str, str]] = [
    ("Enter", "send"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("↑ / ↓", "prompt history"),
    ("Tab", "complete (again: the next one)"),
    ("PgUp / PgDn", "scroll"),
    ("Esc, Ctrl+C", "interrupt the turn"),
    ("Esc Esc", "rewind (idle, empty prompt)"),
    ("Ctrl+C twice", "quit (idle, empty prompt)"),
    ("Ctrl+S / Ctrl+N", "sessions / a new session"),
    ("Ctrl+T / Ctrl+G", "timeline / gauge"),
    ("Shift+Tab", "plan mode on / off"),
    ("Ctrl+P", "command palette"),
    ("Ctrl+Q", "quit"),
    ("y / c", "on a message: copy it / its code"),
]
"""One key and what it does per line: a joined line wrapped mid-phrase at 80 columns."""


def parse_slash(text: str) -> tuple[str, str] | None:
    """`/name arg...` -> (name, arg); None when `text` is not a slash command."""
    text = text.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, arg = text[1:].partition(" ")
    return name.lower(), arg.strip()


def help_rows(custom: Sequence[SlashCommand] = ()) -> tuple[tuple[str, str], ...]:
    """`/help` as rows: ("Commands:", "") heads the commands, ("Keys:", "") the keys, and
    ("Yours:", "") the custom commands and skills (tui/context_actions.py)."""

    def rows(commands: Sequence[SlashCommand]) -> list[tuple[str, str]]:
        return [(f"/{c.name}" + (f" {c.args}" if c.args else ""), c.help) for c in commands]

    yours = (("Yours:", ""), *rows(custom)) if custom else ()
    return (("Commands:", ""), *rows(SLASH_COMMANDS), *yours, ("Keys:", ""), *KEYS)


class PaletteCommand(NamedTuple):
    """A command-palette entry: the app runs `action` (a Textual action string)."""

    title: str
    help: str
    action: str


PALETTE_COMMANDS: list[PaletteCommand] = [
    PaletteCommand("New session", "Start a new session (Ctrl+N)", "new_session"),
    PaletteCommand("Sessions", "Browse and resume sessions (Ctrl+S)", "sessions"),
    PaletteCommand("Switch model", "Pick the model for the next turns", "model"),
    PaletteCommand("Plan mode", "Only reading tools run; answer with a plan (Shift+Tab)", "plan"),
    PaletteCommand("Compact history", "Compress the history now", "compact"),
    PaletteCommand("Export session", "Write this session as Markdown", "export"),
    PaletteCommand("Toggle timeline", "Show or hide the tool timeline (Ctrl+T)", "toggle_timeline"),
    PaletteCommand("Toggle gauge", "Show or hide the token gauge (Ctrl+G)", "toggle_gauge"),
    PaletteCommand("Copy last response", "Copy to the clipboard", "copy_last"),
    PaletteCommand("Copy last code block", "Copy the last response's last code block", "copy_code"),
    PaletteCommand("Interrupt", "Stop the running turn (Esc)", "interrupt"),
    PaletteCommand("Permissions", "List and remove the saved always-allow rules", "permissions"),
    PaletteCommand("MCP servers", "Each server's state, tools, errors and connect time", "mcp"),
    PaletteCommand("Hooks", "The hooks that run, and where each is configured", "hooks"),
    PaletteCommand("Context", "What the next call sends: files, tools, tokens", "context"),
    PaletteCommand("Rewind", "Undo to before one of your messages (Esc Esc)", "rewind"),
    PaletteCommand("Diff of this turn", "What the last turn changed, file by file", "diff"),
    PaletteCommand("Diff of the session", "Everything this session changed", "diff('session')"),
    PaletteCommand("Help", "Show commands and keys", "help"),
]

_SLASH_ACTIONS = {
    "new": "new_session",
    "sessions": "sessions",
    "compact": "compact",
    "plan": "plan",
    "export": "export",
    "clear": "clear",
    "permissions": "permissions",
    "mcp": "mcp",
    "hooks": "hooks",
    "context": "context",
    "rewind": "rewind",
    "help": "help",
    "quit": "quit",
    "exit": "quit",
    "q": "quit",
}


def slash_action(name: str, arg: str) -> str:
    """The app action (a Textual action string) that runs `/name arg`."""
    if name in _SLASH_ACTIONS:
        return _SLASH_ACTIONS[name]
    match name:
        case "resume" if arg:
            return f"resume({arg!r})"
        case "model":
            return f"model({arg!r})"
        case "copy":
            return "copy_code" if arg == "code" else "copy_last"
        case "diff":
            return "diff('session')" if arg == "session" else "diff"
    usage = next((c for c in SLASH_COMMANDS if c.name == name), None)
    hint = f"Usage: /{name} {usage.args}" if usage else "Type /help for the list."
    return f"warn({f'/{name}: {hint}'!r})"

"""Slash commands and command-palette entries of the TUI (the app implements the actions)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from picobot_tui.widgets.prompt import SlashCommand

if TYPE_CHECKING:
    from picobot_tui.tui.app import PicobotApp

SLASH_COMMANDS: list[SlashCommand] = [
    SlashCommand("new", "", "start a new session"),
    SlashCommand("sessions", "", "browse, search and resume sessions"),
    SlashCommand("resume", "ID", "resume a session by id (or `latest`)"),
    SlashCommand("model", "NAME", "switch the model for the next turns"),
    SlashCommand("compact", "", "compress the history now"),
    SlashCommand("export", "", "export this session to Markdown"),
    SlashCommand("copy", "", "copy the last response (`/copy code`: its last code block)"),
    SlashCommand("clear", "", "clear the screen (the session is kept)"),
    SlashCommand("help", "", "show commands and keys"),
    SlashCommand("quit", "", "quit picobot"),
]

KEYS_HELP = (
    "Enter send · Shift+Enter/Ctrl+J newline · ↑/↓ history · Tab complete · "
    "Esc interrupt · Ctrl+S sessions · Ctrl+N new · Ctrl+T timeline · Ctrl+B gauge · "
    "Ctrl+P palette · Ctrl+Q quit · on a message: y copy, c copy code"
)


def parse_slash(text: str) -> tuple[str, str] | None:
    """`/name arg...` -> (name, arg); None when `text` is not a slash command."""
    text = text.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, arg = text[1:].partition(" ")
    return name.lower(), arg.strip()


def help_text() -> str:
    lines = ["Commands:"]
    for c in SLASH_COMMANDS:
        usage = f"/{c.name}" + (f" {c.args}" if c.args else "")
        lines.append(f"  {usage:<16} {c.help}")
    lines.append("")
    lines.append("Keys: " + KEYS_HELP)
    return "\n".join(lines)


def system_commands(app: PicobotApp) -> Iterable[SystemCommand]:
    """Entries for the command palette (Ctrl+P), next to Textual's own (theme, quit, ...)."""
    yield SystemCommand("New session", "Start a new session (Ctrl+N)", app.action_new_session)
    yield SystemCommand("Sessions", "Browse and resume sessions (Ctrl+S)", app.action_sessions)
    yield SystemCommand("Switch model", "Type /model NAME in the prompt", app.action_prompt_model)
    yield SystemCommand("Compact history", "Compress the history now", app.action_compact)
    yield SystemCommand("Export session", "Write this session as Markdown", app.action_export)
    yield SystemCommand(
        "Toggle timeline", "Show or hide the tool timeline (Ctrl+T)", app.action_toggle_timeline
    )
    yield SystemCommand(
        "Toggle gauge", "Show or hide the token gauge (Ctrl+B)", app.action_toggle_gauge
    )
    yield SystemCommand("Copy last response", "Copy to the clipboard", app.action_copy_last)
    yield SystemCommand(
        "Copy last code block", "Copy the last response's last code block", app.action_copy_code
    )
    yield SystemCommand("Interrupt", "Stop the running turn (Esc)", app.action_interrupt)
    yield SystemCommand("Help", "Show commands and keys", app.action_help)


async def run_slash(app: PicobotApp, name: str, arg: str) -> None:
    """Run `/name arg` in the app."""
    match name:
        case "new":
            await app.action_new_session()
        case "sessions":
            app.action_sessions()
        case "resume" if arg:
            await app.sessions.resume(arg)
        case "model" if arg:
            app.set_model(arg)
        case "model":
            app.notify(f"Model: {app.status.model}. Use /model NAME to switch.")
        case "compact":
            app.action_compact()
        case "export":
            app.action_export()
        case "copy":
            app.action_copy_code() if arg == "code" else app.action_copy_last()
        case "clear":
            await app.conversation.clear()
        case "help":
            await app.conversation.add_notice("info", help_text())
        case "quit" | "exit" | "q":
            await app.action_quit()
        case _:
            usage = next((c for c in SLASH_COMMANDS if c.name == name), None)
            hint = f"Usage: /{name} {usage.args}" if usage else "Type /help for the list."
            app.notify(f"/{name}: {hint}", severity="warning")

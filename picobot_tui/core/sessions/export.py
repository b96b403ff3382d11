"""A session as a Markdown transcript (every message, tool call and tool result), and the one
rule for the file a front end exports it to."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.content import content_text
from picobot_tui.core.paths import picobot_home, shown
from picobot_tui.core.private_files import ensure_private_dir
from picobot_tui.core.sessions.files import SessionInfo
from picobot_tui.core.textsafe import terminal_safe

_HEADINGS = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool result"}


def export_filename(key: str) -> str:
    """The file name a session is exported to: `picobot-<key>.md`, with every character
    outside [A-Za-z0-9._-] replaced, so it cannot escape the export directory."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", key).strip("._") or "session"
    return f"picobot-{name[:120]}.md"


def default_export_dir() -> Path:
    """Where the TUI's `/export` and the browser's ctrl+e write: `~/.picobot/exports`
    (under `$PICOBOT_HOME`), 0700 like the sessions it copies."""
    return picobot_home() / "exports"


def exported_message(path: Path) -> str:
    """What a front end says after an export: the file's name on a line of its own, then its
    folder (`~/…`), so a toast never breaks the name across lines (issue 25, point 6: the
    whole path in one word was longer than the toast and lost its end)."""
    return f"Exported {path.name}\nin {shown(path.parent)}"


def write_export(directory: Path, key: str, markdown: str) -> Path:
    """Write `markdown` (the session `key`'s transcript) to its export file in `directory`
    (created 0700 if missing), as a 0600 file replaced whole; returns the path.
    Raises OSError."""
    path = directory / export_filename(key)
    if not directory.is_dir():
        ensure_private_dir(directory)
    atomic_write(path, markdown.encode("utf-8"), 0o600)
    return path


def fence(text: str, lang: str = "") -> str:
    """A code block that survives backticks inside `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}"


def _pretty_args(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            return json.dumps(json_input.loads(arguments), indent=2, ensure_ascii=False)
        except ValueError:  # malformed or too deep: shown as the model sent them
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)


def usage_line(usage: dict[str, Any]) -> str:
    """The model call's figures under its answer: tokens, the cached parts, cost."""

    def n(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) else 0

    cost = usage.get("cost")
    priced = f" · ${cost:.4f}" if isinstance(cost, int | float) else ""
    return (
        f"*model call: {n('prompt_tokens'):,} tokens in ({n('cache_read_tokens'):,} read "
        f"from cache, {n('cache_write_tokens'):,} written), "
        f"{n('completion_tokens'):,} out{priced}*"
    )


def render_markdown(info: SessionInfo, messages: list[dict[str, Any]]) -> str:
    out = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- **Session:** `{info.key}`",
        f"- **Model:** {info.model or 'unknown'}",
        f"- **Created:** {info.created}",
        f"- **Updated:** {info.updated}",
        f"- **Messages:** {info.message_count}",
        "",
    ]
    tool_names: dict[str, str] = {}
    for m in messages:
        role = m.get("role", "")
        heading = _HEADINGS.get(role, str(role).title())
        if role == "tool":
            call_id = m.get("tool_call_id") or ""
            name = m.get("name") or tool_names.get(call_id, "")
            heading += f": `{name}`" if name else ""
            heading += f" (`{call_id}`)" if call_id else ""
        ts = m.get("ts")
        out += ["---", "", f"## {heading}" + (f" · {ts}" if ts else ""), ""]
        text = content_text(m.get("content"))
        if role in ("tool", "system"):
            out += [fence(text), ""]
        elif text:
            out += [text.rstrip(), ""]
        for call in m.get("tool_calls") or ():
            fn = (call.get("function") if isinstance(call, dict) else None) or {}
            name = fn.get("name") or "?"
            call_id = call.get("id") or ""
            tool_names[call_id] = name
            label = f"**Tool call** `{name}`" + (f" (`{call_id}`)" if call_id else "")
            out += [label, "", fence(_pretty_args(fn.get("arguments") or "{}"), "json"), ""]
        if isinstance(m.get("usage"), dict):
            out += [usage_line(m["usage"]), ""]
        if m.get("interrupted"):
            out += ["*(interrupted)*", ""]
    # Model and client text may hold terminal escape sequences: never print them raw.
    return terminal_safe("\n".join(out).rstrip() + "\n")

"""The core's events as ACP `session/update` notifications.

text_delta -> agent_message_chunk; a tool call -> tool_call (pending), then tool_call_update
as it goes in_progress -> completed / failed, with a `kind`, a readable `title`, the
`locations` it touches and, for write_file / edit_file, a `diff` block (path, oldText,
newText); the todo tool's list -> plan; the context gauge and the session's cost ->
usage_update.

Every string the client shows is made visible, as in the TUI: titles and plan entries with
`label` (one line, no Cc/Cf character: a bidi override or a zero-width space in a command
cannot make its title read as another command), and the text beside them (tool results,
diffs, the raw input and output) with `visible` (stand-ins, \n and \t kept). Only
`locations` keep the path as it is: the client opens it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acp import schema as s

from picobot_tui.core.events import BudgetChanged, ToolCallFinished, ToolCallStarted, UsageUpdated
from picobot_tui.core.visible import label, visible, visible_value

KINDS: dict[str, s.ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "exec": "execute",
    "web_fetch": "fetch",
    "list_dir": "search",
    "todo": "think",
}
MAX_TITLE = 120
MAX_DIFF_BYTES = 1024 * 1024
"""A file bigger than this gets no diff block (the result text still says what changed)."""
_ITEM = re.compile(r"^\s*[-*+]\s+\[([ xX])\]\s*(.*)$")


def kind_of(name: str) -> s.ToolKind:
    return KINDS.get(name, "other")


def title_of(name: str, args: dict[str, Any] | str, server: str | None = None) -> str:
    """`exec: pytest -q`, `read_file: src/app.py`, `mcp time: get_current_time`."""
    if not isinstance(args, dict):
        return label(name, MAX_TITLE)
    if server is not None:
        tool = name.removeprefix(f"mcp_{server}_")
        return label(f"{server}: {tool}", MAX_TITLE)
    detail: Any = None
    if name == "exec":
        detail = args.get("command")
    elif name in ("read_file", "write_file", "edit_file"):
        detail = args.get("path")
    elif name == "list_dir":
        detail = args.get("path") or "."
    elif name == "web_fetch":
        detail = args.get("url")
    elif name == "todo":
        action = args.get("action")
        text = args.get("text") or (f"#{args['index']}" if "index" in args else "")
        detail = f"{action} {text}".strip()
    return label(f"{name}: {detail}" if detail else name, MAX_TITLE)


def _inside(workspace: Path, raw: Any) -> Path | None:
    """The absolute path a tool argument names, when it resolves inside the workspace."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        path = (workspace / Path(raw).expanduser()).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return path if path == workspace or workspace in path.parents else None


def locations_of(
    workspace: Path, name: str, args: dict[str, Any] | str
) -> list[s.ToolCallLocation]:
    if not isinstance(args, dict):
        return []
    raw: Any = None
    if name in ("read_file", "write_file", "edit_file"):
        raw = args.get("path")
    elif name == "list_dir":
        raw = args.get("path") or "."
    elif name == "todo":
        raw = "TODO.md"
    path = _inside(workspace, raw)
    if path is None:
        return []
    line = args.get("offset") if name == "read_file" else None
    return [s.ToolCallLocation(path=str(path), line=line if isinstance(line, int) else None)]


def _read_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_DIFF_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


async def buffer_text(ctx: Any, name: str, args: dict[str, Any] | str) -> str | None:
    """The editor's text of the file a write/edit call changes, when the file tools read
    through the client (ToolContext.files), so the call's diff matches its permission
    preview; None: the disk's text is used."""
    if ctx.files is None or name not in ("write_file", "edit_file") or not isinstance(args, dict):
        return None
    from picobot_tui.core.tools.file_access import current_text

    path = _inside(ctx.workspace, args.get("path"))
    if path is None:
        return None
    try:
        return await current_text(path, ctx)
    except Exception:  # the preview says what went wrong; the diff falls back to the disk
        return None


def diff_of(
    workspace: Path, name: str, args: dict[str, Any] | str, old_text: str | None = None
) -> s.FileEditToolCallContent | None:
    """The change a write_file / edit_file call asks for, against the file as it is now
    (`old_text`: the editor's buffer of it, else the disk is read)."""
    if name not in ("write_file", "edit_file") or not isinstance(args, dict):
        return None
    path = _inside(workspace, args.get("path"))
    if path is None:
        return None
    if old_text is not None:
        old: str | None = old_text
    else:
        old = _read_text(path) if path.exists() else ""
    if old is None:
        return None
    if name == "write_file":
        new = args.get("content")
        if not isinstance(new, str):
            return None
    else:
        before, after = args.get("old_text"), args.get("new_text")
        if not isinstance(before, str) or not isinstance(after, str) or not before:
            return None
        if old.count(before) != 1:
            return None  # the tool will refuse it and say why
        new = old.replace(before, after, 1)
    return s.FileEditToolCallContent(
        type="diff",
        path=str(path),
        old_text=visible(old) if path.exists() else None,
        new_text=visible(new),
    )


def text_content(text: str) -> s.ContentToolCallContent:
    """A tool call's text (a preview, a result), made visible."""
    return s.ContentToolCallContent(
        type="content", content=s.TextContentBlock(type="text", text=visible(text))
    )


def agent_text(text: str) -> s.AgentMessageChunk:
    return s.AgentMessageChunk(
        session_update="agent_message_chunk", content=s.TextContentBlock(type="text", text=text)
    )


def user_text(text: str) -> s.UserMessageChunk:
    return s.UserMessageChunk(
        session_update="user_message_chunk", content=s.TextContentBlock(type="text", text=text)
    )


class ToolCalls:
    """What a session's tool calls look like to the client, kept between their events."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._diffs: dict[str, s.FileEditToolCallContent] = {}
        self._started: dict[str, ToolCallStarted] = {}

    def started(self, ev: ToolCallStarted, old_text: str | None = None) -> s.ToolCallStart:
        self._started[ev.id] = ev
        content: list[Any] = []
        diff = diff_of(self.workspace, ev.name, ev.arguments, old_text)
        if diff is not None:
            self._diffs[ev.id] = diff
            content.append(diff)
        return s.ToolCallStart(
            session_update="tool_call",
            tool_call_id=ev.id,
            title=title_of(ev.name, ev.arguments, ev.server),
            kind=kind_of(ev.name),
            status="pending",
            content=content or None,
            locations=locations_of(self.workspace, ev.name, ev.arguments) or None,
            raw_input=visible_value(ev.arguments),
        )

    def diff(self, call_id: str) -> s.FileEditToolCallContent | None:
        return self._diffs.get(call_id)

    def in_progress(self, call_id: str) -> s.ToolCallProgress:
        return s.ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
        )

    def finished(self, ev: ToolCallFinished) -> s.ToolCallProgress:
        self._started.pop(ev.id, None)
        content: list[Any] = []
        diff = self._diffs.pop(ev.id, None)
        if diff is not None and ev.ok:
            content.append(diff)
        content.append(text_content(ev.result))
        return s.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=ev.id,
            status="completed" if ev.ok else "failed",
            content=content,
            raw_output={"status": ev.status, "result": visible(ev.result)},
        )

    def cancel_open(self) -> list[s.ToolCallProgress]:
        """Calls that started but never finished (the turn was cancelled): failed."""
        out = [
            s.ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status="failed",
                content=[text_content("Cancelled by the user.")],
                raw_output={"status": "cancelled"},
            )
            for call_id in self._started
        ]
        self._started.clear()
        self._diffs.clear()
        return out


def plan_from_todo(path: Path) -> s.AgentPlanUpdate | None:
    """TODO.md's checklist as a plan (None when it cannot be read)."""
    try:
        lines = path.read_bytes().decode("utf-8").splitlines() if path.is_file() else []
    except (OSError, UnicodeDecodeError):
        return None
    entries = []
    for line in lines:
        m = _ITEM.match(line)
        if m:
            entries.append(
                s.PlanEntry(
                    content=label(m.group(2)) or "(empty)",
                    priority="medium",
                    status="pending" if m.group(1) == " " else "completed",
                )
            )
    return s.AgentPlanUpdate(session_update="plan", entries=entries)


class Usage:
    """The context gauge (BudgetChanged) and the session's cost (UsageUpdated) as one
    usage_update: `used` / `size` are the context estimate and tokenBudget."""

    def __init__(self) -> None:
        self.cost: float | None = None
        self.last: tuple[int, int, float | None] | None = None

    def cost_seen(self, ev: UsageUpdated) -> None:
        if ev.session_cost is not None:
            self.cost = ev.session_cost

    def update(self, ev: BudgetChanged) -> s.UsageUpdate | None:
        key = (max(0, ev.estimated_tokens), max(0, ev.budget), self.cost)
        if key == self.last:
            return None
        self.last = key
        cost = s.Cost(amount=self.cost, currency="USD") if self.cost is not None else None
        return s.UsageUpdate(session_update="usage_update", used=key[0], size=key[1], cost=cost)


def raw_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

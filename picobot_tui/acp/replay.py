"""`session/load`: a stored session's conversation replayed as `session/update`s, in order:
user_message_chunk, agent_message_chunk, and each tool call as one `tool_call` already in
its final state (its result as content). System records (compaction summaries, notes) are
not part of the conversation the client shows, and an interrupted turn's partial text is
shown as it was kept. Tool-call arguments too deep or not JSON are shown as the text the
model sent (before, arguments nested past the parser's recursion limit made the load fail
with -32603)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp import schema as s

from picobot_tui.acp.updates import (
    agent_text,
    kind_of,
    locations_of,
    text_content,
    title_of,
    user_text,
)
from picobot_tui.core import json_input
from picobot_tui.core.visible import visible_value

Update = s.UserMessageChunk | s.AgentMessageChunk | s.ToolCallStart


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multi-part content: its text parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _args(raw: Any) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    try:
        value = json_input.loads(raw or "{}")
    except (TypeError, ValueError):  # too deep or not JSON: the text as the model sent it
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def history_updates(messages: list[dict[str, Any]], workspace: Path) -> Iterator[Update]:
    results = {
        m.get("tool_call_id"): m
        for m in messages
        if m.get("role") == "tool" and m.get("tool_call_id")
    }
    for m in messages:
        role = m.get("role")
        if role == "user":
            text = _text(m.get("content"))
            if text:
                yield user_text(text)
        elif role == "assistant":
            text = _text(m.get("content"))
            if text:
                yield agent_text(text)
            for call in m.get("tool_calls") or ():
                fn = call.get("function") or {}
                name = str(fn.get("name") or "tool")
                args = _args(fn.get("arguments"))
                result = results.get(call.get("id"))
                status: s.ToolCallStatus = "failed"
                content: list[Any] | None = None
                if result is not None:
                    ok = (result.get("status") or "ok") == "ok"
                    status = "completed" if ok else "failed"
                    content = [text_content(_text(result.get("content")))]
                yield s.ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=str(call.get("id") or ""),
                    title=title_of(name, args),
                    kind=kind_of(name),
                    status=status,
                    content=content,
                    locations=locations_of(workspace, name, args) or None,
                    raw_input=visible_value(args),
                )

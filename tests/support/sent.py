"""What a request sent, as the session holds it: the latest user message carries a
`[current time: …]` line as sent (core/time_line.py), never in the history."""

from __future__ import annotations

from typing import Any

from picobot_tui.core.time_line import without_time_line


def as_stored(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with the time line taken off the user messages' text."""
    out = []
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            m = {**m, "content": without_time_line(m["content"])}
        out.append(m)
    return out


def words(message: dict[str, Any]) -> Any:
    """A sent message's content without the time line (the user's own words)."""
    return as_stored([message])[0].get("content")

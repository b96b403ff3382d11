"""The current time as the model sees it, outside the system prompt.

The system prompt holds only the date, so it stays byte-identical all day and providers'
prompt caching (a cached prefix: system prompt, tool schemas, older messages) keeps working.
The time goes in a short context line at the end of the latest user message *as sent*: the
session file and the history keep the user's own words. The line is made once per turn, so
every model call of a turn sends the same messages up to its newest tool results.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

PREFIX = "[current time: "
SEPARATOR = "\n\n"


def time_line(now: datetime) -> str:
    """`[current time: 2026-01-02 03:04 CET (Friday)]`."""
    return f"{PREFIX}{now.strftime('%Y-%m-%d %H:%M %Z').strip()} ({now:%A})]"


def with_time_line(messages: list[dict[str, Any]], line: str) -> list[dict[str, Any]]:
    """`messages` with `line` added to the content of the last user message (a copy of that
    one message; the others are the same objects)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            content = f"{content}{SEPARATOR}{line}" if content else line
        elif isinstance(content, list):  # content parts: one more text part
            content = [*content, {"type": "text", "text": line}]
        else:
            return messages
        return [*messages[:i], {**message, "content": content}, *messages[i + 1 :]]
    return messages


def without_time_line(text: str) -> str:
    """The user's words of a message as sent (what a scripted or demo model answers to)."""
    head, sep, tail = text.rpartition(PREFIX)
    if sep and tail.endswith("]") and "\n" not in tail:
        return head.removesuffix(SEPARATOR)
    return text

"""The current time as the model sees it, outside the system prompt.

The system prompt holds only the date, so it stays byte-identical all day and providers'
prompt caching (a cached prefix: system prompt, tool schemas, older messages) keeps working.
The time goes in a short context line at the end of each user message *as sent*, made once
when the message is taken and stored beside the user's words (`TIME_KEY` in the session
file), so every later call, later turns and a resumed process included, sends that message
byte for byte as the first time. (Adding the line to the newest message only, and dropping
it when the next turn re-sent that message, broke every prefix written the turn before:
turns 3-10 of a session read 64 % from cache; with the line kept, 94 %.)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

PREFIX = "[current time: "
SEPARATOR = "\n\n"
TIME_KEY = "time_line"
"""The stored user message's key for its time line (never sent as a key)."""


def time_line(now: datetime) -> str:
    """`[current time: 2026-01-02 03:04 CET (Friday)]`."""
    return f"{PREFIX}{now.strftime('%Y-%m-%d %H:%M %Z').strip()} ({now:%A})]"


def as_sent(message: dict[str, Any]) -> dict[str, Any]:
    """A stored user message with its time line folded into the content, as it was sent;
    any other message unchanged. The key itself goes (providers refuse unknown keys)."""
    line = message.get(TIME_KEY)
    if message.get("role") != "user" or TIME_KEY not in message:
        return message
    out = {k: v for k, v in message.items() if k != TIME_KEY}
    if not isinstance(line, str) or not line:
        return out
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = f"{content}{SEPARATOR}{line}" if content else line
    elif isinstance(content, list):  # content parts: one more text part
        out["content"] = [*content, {"type": "text", "text": line}]
    return out


def without_time_line(text: str) -> str:
    """The user's words of a message as sent (what a scripted or demo model answers to)."""
    head, sep, tail = text.rpartition(PREFIX)
    if sep and tail.endswith("]") and "\n" not in tail:
        return head.removesuffix(SEPARATOR)
    return text

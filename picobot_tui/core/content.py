"""The text of a chat message's `content`, the one flattening every layer shows or searches."""

from __future__ import annotations

from typing import Any


def content_text(content: Any) -> str:
    """The text of an OpenAI content value: a string, None, or a list of parts (text parts
    joined by newlines; an image or other non-text part shown as `<its type>`)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type", "text") == "text":
                    parts.append(str(part.get("text", "")))
                else:  # an image or other non-text part: name it
                    parts.append(f"<{part.get('type', 'part')}>")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return str(content)

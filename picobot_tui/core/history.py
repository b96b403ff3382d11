"""Turning stored session messages into a conversation a provider will accept.

A session file can end in the middle of a tool round (the process was killed after the
assistant asked for tools but before every result was written). Providers reject an assistant
`tool_calls` message without a result for each call, and a `tool` message without its call,
so both are repaired here before anything is sent.
"""

from __future__ import annotations

from typing import Any, Protocol

from picobot_tui.core.time_line import as_sent

PROVIDER_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
INTERRUPTED_RESULT = "Error: no result was recorded (picobot stopped before the tool finished)."

Message = dict[str, Any]


class _AppendableSession(Protocol):
    messages: list[Message]

    def append(self, message: Message) -> None: ...


_ROLE_ONLY = {"tool_calls": "assistant", "tool_call_id": "tool"}


def to_provider(message: Message) -> Message:
    """Only the keys a provider understands (drops ts, status, interrupted, ...), and
    `tool_calls` / `tool_call_id` only on the role they belong to (a hand-edited user
    message carrying `tool_calls` would be rejected by the provider on every resume); a
    user message's stored time line back in its text, as it was sent (core/time_line.py)."""
    message = as_sent(message)
    role = message.get("role")
    return {
        k: v for k, v in message.items() if k in PROVIDER_KEYS and _ROLE_ONLY.get(k, role) == role
    }


def _missing_result(call: Message) -> Message:
    return {
        "role": "tool",
        "tool_call_id": call.get("id"),
        "name": call.get("function", {}).get("name", ""),
        "content": INTERRUPTED_RESULT,
        "status": "cancelled",
    }


def is_interrupted_marker(message: Message) -> bool:
    """The empty assistant message that marks a turn interrupted before any text came: kept
    in the file (a resumed session shows the mark), never sent to a provider."""
    return (
        message.get("role") == "assistant"
        and bool(message.get("interrupted"))
        and not message.get("tool_calls")
        and not str(message.get("content") or "").strip()
    )


def repair(messages: list[Message]) -> list[Message]:
    """Every call gets a result right after its assistant message; orphan results go."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        i += 1
        role = msg.get("role")
        if role == "tool":
            continue  # reached only by an orphan: results are consumed below
        if role not in {"user", "assistant", "system"}:
            continue
        if is_interrupted_marker(msg):
            continue  # nothing to send
        out.append(msg)
        calls = msg.get("tool_calls") or []
        if role != "assistant" or not calls:
            continue
        results: dict[Any, Message] = {}  # keyed by whatever id the file holds
        while i < len(messages) and messages[i].get("role") == "tool":
            results.setdefault(messages[i].get("tool_call_id"), messages[i])
            i += 1
        for call in calls:
            out.append(results.get(call.get("id")) or _missing_result(call))
    return out


def heal_orphans(session: _AppendableSession) -> list[Message]:
    """Append a result for each call left without one at the end of the session file, so
    the file itself is consistent again; returns the repaired message list."""
    msgs = session.messages
    last = len(msgs) - 1
    while last >= 0 and msgs[last].get("role") == "tool":
        last -= 1
    if last >= 0 and msgs[last].get("role") == "assistant" and msgs[last].get("tool_calls"):
        answered = {m.get("tool_call_id") for m in msgs[last + 1 :]}
        for call in msgs[last]["tool_calls"]:
            if call.get("id") not in answered:
                session.append(_missing_result(call))
    return repair(list(session.messages))

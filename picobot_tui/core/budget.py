"""Token estimates and the two ways history is cut: compression at 80 % of the budget, and
the bound applied when a session is resumed. Both cut at "units" so an assistant message with
`tool_calls` is never separated from its tool results."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]

COMPRESS_AT = 0.80
KEEP_RATIO = 0.75
_MESSAGE_OVERHEAD = 4  # role and framing tokens per message, as OpenAI counts them


def estimate_text(text: str) -> int:
    """chars/4, the no-network fallback."""
    return (len(text) + 3) // 4


def estimate_message(msg: Message) -> int:
    n = _MESSAGE_OVERHEAD
    content = msg.get("content")
    if isinstance(content, str):
        n += estimate_text(content)
    elif content is not None:
        n += estimate_text(json.dumps(content))
    for call in msg.get("tool_calls") or ():
        fn = call.get("function", {})
        n += estimate_text(fn.get("name", "")) + estimate_text(fn.get("arguments", "")) + 4
    return n


def estimate_messages(messages: Sequence[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


@dataclass
class TokenEstimator:
    """Estimates prompt tokens, calibrated by what the provider reported for the last call.

    After a call we remember how many messages it carried and the provider's `prompt_tokens`;
    the next estimate is that figure plus a chars/4 estimate of only what is new. If the
    history was rewritten (compression, resume) the calibration no longer matches and we fall
    back to chars/4 for everything.
    """

    _count: int = 0
    _last_fingerprint: str | None = None
    _reported: int | None = None

    @staticmethod
    def _fingerprint(msg: Message) -> str:
        return f"{msg.get('role')}:{len(str(msg.get('content')))}:{id(msg)}"

    def calibrate(self, messages: Sequence[Message], prompt_tokens: int) -> None:
        if not messages or prompt_tokens <= 0:
            return
        self._count = len(messages)
        self._last_fingerprint = self._fingerprint(messages[-1])
        self._reported = prompt_tokens

    def reset(self) -> None:
        self._reported = None

    def estimate(self, messages: Sequence[Message], extra: int = 0) -> int:
        n = self._count
        if (
            self._reported is not None
            and 0 < n <= len(messages)
            and self._fingerprint(messages[n - 1]) == self._last_fingerprint
        ):
            return self._reported + estimate_messages(messages[n:]) + extra
        return estimate_messages(messages) + extra


def units(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages so an assistant `tool_calls` message and its results stay together.

    A tool message with no matching call before it (an orphan) is dropped here, so no cut
    can ever leave one at the front.
    """
    out: list[list[Message]] = []
    open_ids: set[str] = set()
    for msg in messages:
        role = msg.get("role")
        if role == "tool":
            if out and msg.get("tool_call_id") in open_ids:
                out[-1].append(msg)
                open_ids.discard(msg.get("tool_call_id"))
            continue
        open_ids = {c.get("id") for c in msg.get("tool_calls") or ()}
        out.append([msg])
    return out


def _exchange_heads(messages: Sequence[Message], count: int) -> list[Message]:
    """The first `count` exchanges, each reduced to its user message and the assistant's
    final text reply (tool traffic in between is left out, so no pair is split)."""
    head: list[Message] = []
    exchanges = 0
    i = 0
    while i < len(messages) and exchanges < count:
        if messages[i].get("role") != "user":
            i += 1
            continue
        user = messages[i]
        j = i + 1
        reply: Message | None = None
        while j < len(messages) and messages[j].get("role") != "user":
            m = messages[j]
            if m.get("role") == "assistant" and not m.get("tool_calls") and m.get("content"):
                reply = m
            j += 1
        head.append(user)
        if reply is not None:
            head.append(reply)
        exchanges += 1
        i = j
    return head


@dataclass(frozen=True)
class Cut:
    messages: list[Message]
    dropped: int


def _keep_head_and_tail(messages: Sequence[Message], head: list[Message], fits: Any) -> Cut:
    head_ids = {id(m) for m in head}
    # The tail may not reach back into the head's exchanges.
    last_head_index = max((i for i, m in enumerate(messages) if id(m) in head_ids), default=-1)
    boundary = last_head_index + 1
    if head:
        # Skip the rest of the head's last exchange: it was summarised by the head.
        while boundary < len(messages) and messages[boundary].get("role") != "user":
            boundary += 1
    tail: list[Message] = []
    for unit in reversed(units(messages[boundary:])):
        if not fits(tail, unit):
            break
        tail[0:0] = unit
    kept = head + tail
    return Cut(kept, len(messages) - len(kept))


def compress(messages: Sequence[Message], budget: int, fixed_tokens: int = 0) -> Cut:
    """Keep the first 2 exchanges and as many recent messages as fit in 75 % of `budget`.

    `fixed_tokens` is what the system prompt and tool schemas take.
    """
    target = int(budget * KEEP_RATIO) - fixed_tokens
    head = _exchange_heads(messages, 2)
    while head and estimate_messages(head) > target // 2:
        head = head[:-2] if len(head) > 2 else []
    used = estimate_messages(head)

    def fits(tail: list[Message], unit: list[Message]) -> bool:
        return used + estimate_messages(tail) + estimate_messages(unit) <= target

    return _keep_head_and_tail(messages, head, fits)


def bound_history(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """The context loaded on resume: the first exchange plus the most recent messages, at
    most `max_messages` in all, never splitting a tool pair."""
    if len(messages) <= max_messages:
        return [m for unit in units(messages) for m in unit]
    head = _exchange_heads(messages, 1)
    if len(head) >= max_messages:
        head = []
    limit = max_messages - len(head)

    def fits(tail: list[Message], unit: list[Message]) -> bool:
        return len(tail) + len(unit) <= limit

    return _keep_head_and_tail(messages, head, fits).messages

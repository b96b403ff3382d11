"""Token estimates and the two ways the context is cut: compaction at 80 % of the budget,
and the bound on how many stored messages are sent. Both cut at "units" so an assistant
message with `tool_calls` is never separated from its tool results.

One estimator serves the trigger, the cut and the gauge: chars/4 ("raw" tokens), scaled by
the ratio between what the provider reported for the last call and the raw estimate of that
same call. The cut works in raw tokens against a limit divided by that ratio, so a provider
that counts 2x chars/4 (CJK text, dense code) gets a cut twice as deep.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]

COMPRESS_AT = 0.80
KEEP_RATIO = 0.75
HEAD_SHARE = 0.25  # the first exchanges may take at most this share of the budget
_MESSAGE_OVERHEAD = 4  # role and framing tokens per message, as OpenAI counts them
# Clamp for the calibrated ratio: a provider that reports only uncached prompt tokens (or a
# stub that always says 10) must not make the context look empty and stop compaction.
MIN_RATIO, MAX_RATIO = 0.5, 16.0
SHORTENED = " …[shortened to fit the token budget]"
_MIN_HEAD_CHARS = 200  # below this a shortened head says nothing useful: drop it instead
COMPACTED_PREFIX = "[Compacted context]"
"""Content prefix of the one system message that stands for what a compaction dropped."""


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


def minimum_budget(fixed_tokens: int) -> int:
    """The smallest tokenBudget whose compression threshold leaves room for a short message
    (~256 tokens) after the system prompt and tool schemas, rounded up to a hundred."""
    return math.ceil((fixed_tokens + 256) / COMPRESS_AT / 100) * 100


@dataclass
class TokenEstimator:
    """chars/4 scaled by the provider's tokens-per-estimated-token ratio of the last call.

    The ratio survives compaction and the message bound (it is a property of the provider
    and the text, not of which messages are sent), so the trigger stays calibrated.
    """

    ratio: float = 1.0

    def calibrate(self, messages: Sequence[Message], prompt_tokens: int, extra: int = 0) -> None:
        """`messages` (plus `extra` raw tokens: system prompt, schemas) were reported as
        `prompt_tokens`."""
        raw = estimate_messages(messages) + extra
        if raw <= 0 or prompt_tokens <= 0:
            return
        self.ratio = min(MAX_RATIO, max(MIN_RATIO, prompt_tokens / raw))

    def scale(self, raw: int) -> int:
        return math.ceil(raw * self.ratio)

    def estimate(self, messages: Sequence[Message], extra: int = 0) -> int:
        return self.scale(estimate_messages(messages) + extra)


def is_compacted(msg: Message) -> bool:
    """The message a compaction put in place of what it dropped (summary or notice)."""
    content = msg.get("content")
    return (
        msg.get("role") == "system"
        and isinstance(content, str)
        and content.startswith(COMPACTED_PREFIX)
    )


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


def _flat(groups: Sequence[Sequence[Message]]) -> list[Message]:
    return [m for g in groups for m in g]


def _is_user(msg: Message) -> bool:
    return msg.get("role") == "user"


def _ends_turn(msg: Message) -> bool:
    """An assistant message without tool calls: the loop records one as the last message of
    a turn (the answer, or the stop it ran into), so nothing of that turn comes after it."""
    return msg.get("role") == "assistant" and not msg.get("tool_calls")


def _exchange_heads(messages: Sequence[Message], count: int) -> tuple[list[Message], int]:
    """The first `count` exchanges, each reduced to its user message and the assistant's
    final text reply (tool traffic in between is left out, so no pair is split), and the
    index just after the last exchange taken.

    The reply is the message that ended the turn, not the last text before the next user
    message: a history already bounded holds the first exchange followed by a later turn's
    tail, and the last text there is that later turn's answer (TURN-1 went out paired with
    ANSWER-4 once a long-running process trimmed twice)."""
    head: list[Message] = []
    exchanges = 0
    i = 0
    end = 0
    while i < len(messages) and exchanges < count:
        if not _is_user(messages[i]):
            i += 1
            continue
        user = messages[i]
        j = i + 1
        reply: Message | None = None
        ended = False
        while j < len(messages) and not _is_user(messages[j]):
            m = messages[j]
            if not ended and _ends_turn(m):
                ended = True
                reply = m if m.get("content") else None
            j += 1
        head.append(user)
        if reply is not None:
            head.append(reply)
        exchanges += 1
        i = end = j
    return head, end


def shorten(msg: Message, cap: int) -> Message:
    """`msg` with its text cut to `cap` characters (marked), unchanged when it fits."""
    content = msg.get("content")
    if not isinstance(content, str) or len(content) <= cap:
        return msg
    return {**msg, "content": content[: max(0, cap - len(SHORTENED))] + SHORTENED}


def _fit_head(head: list[Message], limit: int) -> list[Message]:
    """The head within `limit` raw tokens: whole, shortened (each text to the same cap), one
    exchange, or nothing."""
    while head:
        if estimate_messages(head) <= limit:
            return head
        cap = (limit - _MESSAGE_OVERHEAD * len(head)) * 4 // len(head)
        if cap >= _MIN_HEAD_CHARS:
            short = [shorten(m, cap) for m in head]
            if estimate_messages(short) <= limit:
                return short
        # Drop the second exchange (its user message and reply), then the first.
        second = [i for i, m in enumerate(head) if _is_user(m)]
        head = head[: second[1]] if len(second) > 1 else []
    return []


@dataclass(frozen=True)
class Cut:
    """What a compaction keeps (`head` + a summary in between + `tail`) and drops."""

    head: list[Message]
    tail: list[Message]
    dropped: list[Message] = field(default_factory=list)
    removed: int = 0
    """How many messages of the input are not in head + tail."""
    pinned: int = 0
    """When the current turn lost its oldest rounds, the tail is not one run of the input:
    its first `pinned` messages (the user message) come `gap` messages before the rest."""
    gap: int = 0
    shortened: bool = False
    """The head's texts were cut to fit a quarter of the budget."""

    @property
    def messages(self) -> list[Message]:
        return self.head + self.tail

    @property
    def changed(self) -> bool:
        return self.removed > 0 or bool(self.dropped) or self.shortened


def _current_start(flat: Sequence[Message]) -> int:
    """Index of the current (last) user message; len(flat) when there is none."""
    for i in range(len(flat) - 1, -1, -1):
        if _is_user(flat[i]):
            return i
    return len(flat)


def compress(
    messages: Sequence[Message],
    budget: int,
    fixed_tokens: int = 0,
    *,
    ratio: float = 1.0,
    reserve: int = 0,
) -> Cut:
    """Cut the context to 75 % of `budget` (real tokens; raw estimates times `ratio`).

    Kept, in order of priority: the current user message; the current turn's tool rounds,
    newest first (the oldest go only when the whole turn cannot fit); the first two
    exchanges, within a quarter of the budget (shortened or dropped beyond that); then as
    many recent messages as fit. `fixed_tokens` (raw) is the system prompt and tool schemas,
    `reserve` (raw) the room kept for the summary that replaces the dropped middle. A
    previous summary is never kept in the tail: the new one covers it.
    """
    flat = _flat(units(messages))
    keep = int(budget * KEEP_RATIO)
    # The largest raw total whose scaled estimate (ceil(raw * ratio)) stays within `keep`:
    # int(budget * 0.75 / ratio) alone let the estimate land one token over (hypothesis
    # found budget 2,870, ratio ~1.5: 2,153 > 2,152).
    total = int(keep / ratio)
    while total > 0 and math.ceil(total * ratio) > keep:
        total -= 1
    limit = total - fixed_tokens - reserve
    cur = _current_start(flat)
    past, turn = flat[:cur], units(flat[cur:])

    # 1. The current turn: the user message always, then its rounds from the newest back.
    kept_turn: list[list[Message]] = []
    turn_dropped: list[Message] = []
    used = 0
    if turn:
        used = estimate_messages(turn[0])
        rounds = turn[1:]
        take = len(rounds)
        total = used + estimate_messages(_flat(rounds))
        while take > 1 and total > limit:  # the newest round always stays
            total -= estimate_messages(rounds[len(rounds) - take])
            take -= 1
        kept_turn = [turn[0], *rounds[len(rounds) - take :]]
        turn_dropped = _flat(rounds[: len(rounds) - take])
        used = total

    # 2. The head: the first two exchanges before any earlier summary.
    last_summary = max((i for i, m in enumerate(past) if is_compacted(m)), default=None)
    head_src = past[:last_summary] if last_summary is not None else past
    head_msgs, head_end = _exchange_heads(head_src, 2)
    head = _fit_head(head_msgs, max(0, min(int(budget * HEAD_SHARE / ratio), limit - used)))
    used += estimate_messages(head)
    if last_summary is not None:
        start = last_summary + 1
        before = past[: last_summary + 1]  # the previous head and summary
    else:
        start = head_end if head else 0
        before = past[:start]
    head_ids = {id(m) for m in head_msgs[: len(head)]}  # `head` keeps a prefix of them
    dropped = [m for m in before if id(m) not in head_ids]

    # 3. Recent messages of earlier turns, newest first, while they fit.
    recent = units(past[start:])
    take = 0
    for unit in reversed(recent):
        cost = estimate_messages(unit)
        if used + cost > limit:
            break
        used += cost
        take += 1
    dropped += _flat(recent[: len(recent) - take]) + turn_dropped
    tail = _flat(recent[len(recent) - take :]) + _flat(kept_turn)
    removed = len(messages) - len(head) - len(tail)
    if not dropped and head == head_msgs:
        removed = len(messages) - len(flat)  # only orphans went: nothing was compacted
    pinned = len(turn[0]) + len(_flat(recent[len(recent) - take :])) if turn_dropped else 0
    shortened = any(a is not b for a, b in zip(head, head_msgs, strict=False))
    return Cut(head, tail, dropped, removed, pinned, len(turn_dropped), shortened)


def bound_history(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """What is sent of the stored history: the compacted prefix (head and summary) or the
    first exchange, plus the most recent messages, at most `max_messages` in all, never
    splitting a tool pair. The current user message always stays; of its turn the oldest
    rounds go first."""
    flat = _flat(units(messages))
    if len(flat) <= max_messages:
        return flat
    cur = _current_start(flat)
    last_summary = max((i for i, m in enumerate(flat[:cur]) if is_compacted(m)), default=None)
    if last_summary is not None:
        head, start = flat[: last_summary + 1], last_summary + 1
    else:
        head, start = _exchange_heads(flat[:cur], 1)
    turn = units(flat[cur:])
    if len(head) + (len(turn[0]) if turn else 0) > max_messages:
        head = [m for m in head if is_compacted(m)][-1:]  # keep only the summary, if any
    limit = max_messages - len(head)
    kept: list[list[Message]] = []
    n = 0
    if turn:  # the user message, then its rounds from the newest back
        kept, n = [turn[0]], len(turn[0])
        rounds: list[list[Message]] = []
        for unit in reversed(turn[1:]):
            if n + len(unit) > limit:
                break
            rounds.insert(0, unit)
            n += len(unit)
        kept += rounds
        if len(rounds) < len(turn) - 1:
            return head + _flat(kept)
    older: list[list[Message]] = []
    for unit in reversed(units(flat[start:cur])):
        if n + len(unit) > limit:
            break
        older.insert(0, unit)
        n += len(unit)
    if last_summary is None and not any(_ends_turn(m) for m in head):
        # A first turn that ended without an answer must not be followed by another turn's
        # tail: the next bound would take that tail's answer as the first exchange's.
        while older and not _is_user(older[0][0]):
            older.pop(0)
    return head + _flat(older) + _flat(kept)

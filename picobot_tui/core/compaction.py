"""Summarised compaction: the request that asks the model for a summary of what a cut drops,
the message that stands for it in the context, and the record of it in the session file.

A compaction is stored as one `system` message carrying a `compaction` key: its content is
the summary (or a notice when messages were only dropped), `head` the first exchanges as
they were kept (maybe shortened), `tail` how many of the messages stored before it stayed.
Every original message stays in the file; `stored_context` rebuilds from the last record
exactly the context the live process had, so a resume sees what the model saw.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from picobot_tui.core.budget import (
    COMPACTED_PREFIX,
    COMPRESS_AT,
    Cut,
    is_compacted,
    units,
)
from picobot_tui.core.history import to_provider
from picobot_tui.core.llm.model import LLMError, ModelClient, ModelRequest, TextChunk, UsageChunk
from picobot_tui.core.time_line import without_time_line

if TYPE_CHECKING:
    from picobot_tui.core.settings import AgentDefaults
    from picobot_tui.core.turn_state import SessionState

Message = dict[str, Any]

SUMMARY_HEADER = (
    f"{COMPACTED_PREFIX} Summary of the earlier conversation, written when older messages "
    "left the context to fit the token budget (the session file keeps them all):\n\n"
)
SUMMARY_SYSTEM = (
    "You write summaries of conversations between a user and picobot, a coding agent, so "
    "that the agent can carry on after the older messages leave its context."
)
SUMMARY_REQUEST = (
    "Write a summary of the conversation so far (the transcript above) for the agent to "
    "continue from: the user's goals and preferences, decisions taken, facts learned, the "
    "files, commands and results that matter, what was done and what is still open. Be "
    "concrete and brief: at most {words} words. Reply with the summary only."
)
_TOOL_RESULT_CHARS = 1500  # a tool result's share of the transcript: the gist is enough


def summary_tokens(budget: int) -> int:
    """Room for the summary: a tenth of the budget, between 128 and 2,048 tokens."""
    return max(128, min(2048, budget // 10))


MIN_SUMMARY_CHARS = 256  # ~64 tokens: below this, messages are too few to be worth a summary


def summary_room(budget: int, dropped_raw: int, ratio: float) -> tuple[int, int]:
    """(tokens the summary call may write, chars the summary may keep) for messages of
    `dropped_raw` estimated tokens: summary_tokens(budget), but never more than half of what
    the summary replaces, so it always makes the context smaller. (/compact of a short
    history once grew it, 1,684 -> 2,676 tokens: a 2,048-token summary of ~500 tokens.)"""
    room = summary_tokens(budget)
    chars = min(room * 4, dropped_raw * 2)  # half the dropped raw tokens, 4 chars each
    return min(room, max(1, math.ceil(chars / 4 * ratio))), chars


def dropped_note(count: int) -> str:
    if count == 0:  # only the head was shortened
        return (
            f"{COMPACTED_PREFIX} The first messages of this conversation were shortened to "
            "fit the token budget (the session file keeps them whole)."
        )
    return (
        f"{COMPACTED_PREFIX} {count} earlier messages of this conversation were left out "
        "of the context to fit the token budget (the session file keeps them)."
    )


def summary_message(summary: str, max_chars: int) -> str:
    text = summary.strip()
    if len(text) > max_chars:  # a model that ignored the word limit
        text = text[: max(0, max_chars - 1)] + "…"
    return SUMMARY_HEADER + text


def summary_of(content: str) -> str:
    """The model's text of a summary message ("" for a notice)."""
    return content[len(SUMMARY_HEADER) :] if content.startswith(SUMMARY_HEADER) else ""


def _line(msg: Message) -> str:
    role = msg.get("role")
    content = msg.get("content")
    text = content if isinstance(content, str) else json.dumps(content) if content else ""
    if role == "tool":
        if len(text) > _TOOL_RESULT_CHARS:
            text = text[:_TOOL_RESULT_CHARS] + f" …[{len(text) - _TOOL_RESULT_CHARS} more chars]"
        return f"TOOL RESULT ({msg.get('name') or 'tool'}): {text}"
    if role == "system":
        if is_compacted(msg):
            return "EARLIER SUMMARY: " + (summary_of(text) or text[len(COMPACTED_PREFIX) :])
        return f"NOTE: {text}"
    parts = [f"{str(role).upper()}: {text}"] if text else []
    for call in msg.get("tool_calls") or ():
        fn = call.get("function", {})
        parts.append(f"ASSISTANT CALLED {fn.get('name', '?')}({fn.get('arguments', '')})")
    return "\n".join(parts)


def transcript(messages: Sequence[Message], max_chars: int) -> str:
    """The messages as plain text within `max_chars`: an earlier summary first, then the
    newest lines that fit (older ones are counted, not shown)."""
    lines = [line for m in messages if (line := _line(m))]
    summaries = [line for line in lines if line.startswith("EARLIER SUMMARY: ")]
    rest = [line for line in lines if not line.startswith("EARLIER SUMMARY: ")]
    room = max_chars - sum(len(s) + 2 for s in summaries)
    shown: list[str] = []
    for line in reversed(rest):
        if len(line) + 2 > room:
            break
        shown.insert(0, line)
        room -= len(line) + 2
    left_out = len(rest) - len(shown)
    head = [f"[{left_out} older messages are not shown]"] if left_out else []
    return "\n\n".join(summaries + head + shown)


def summary_request(dropped: Sequence[Message], max_chars: int, words: int) -> list[Message]:
    """The messages of the summary call: its last message is a user message asking for a
    summary of the conversation so far (the dropped messages, as a transcript)."""
    text = transcript(dropped, max_chars)
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {
            "role": "user",
            "content": "Transcript of the conversation so far:\n\n"
            + text
            + "\n\n"
            + SUMMARY_REQUEST.format(words=words),
        },
    ]


async def summarise(model: ModelClient, request: ModelRequest) -> tuple[str, UsageChunk | None]:
    """One model call, no retries (a failure falls back to dropping). Tool calls are
    ignored: only the text counts. LLMError when the call fails or the text is empty."""
    parts: list[str] = []
    usage: UsageChunk | None = None
    async for chunk in model.stream(request):
        if isinstance(chunk, TextChunk):
            parts.append(chunk.text)
        elif isinstance(chunk, UsageChunk):
            usage = chunk
    text = "".join(parts).strip()
    if not text:
        raise LLMError("the model returned an empty summary", kind="protocol", transient=False)
    return text, usage


def record(content: str, cut: Cut, strategy: str) -> Message:
    """The session-file line of one compaction: the head as kept, and where the tail's
    messages are among those stored before it (the last `tail`, and `pinned` more that
    come `gap` messages before them)."""
    info: dict[str, Any] = {
        "head": cut.head,
        "tail": len(cut.tail) - cut.pinned,
        "dropped": len(cut.dropped),
        "strategy": strategy,
    }
    if cut.pinned:
        info.update(pinned=cut.pinned, gap=cut.gap)
    return {"role": "system", "content": content, "compaction": info}


def _is_record(msg: Message) -> bool:
    return msg.get("role") == "system" and isinstance(msg.get("compaction"), dict)


def _head_message(m: Any) -> Message | None:
    """A stored head message as it may be sent (None for a damaged, hand-edited one)."""
    if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
        return None
    if not isinstance(m.get("content"), str) or m.get("tool_calls"):
        return None
    return {"role": m["role"], "content": m["content"]}


def _count(info: dict[str, Any], name: str, most: int) -> int:
    value = info.get(name)
    return min(max(value, 0), most) if isinstance(value, int) else 0


def stored_context(messages: Sequence[Message]) -> list[Message]:
    """The provider messages of the context a session's stored (repaired) messages stand
    for: after the last compaction record, its head, its summary, the `tail` messages
    stored before it and everything stored after it."""
    last = max((i for i, m in enumerate(messages) if _is_record(m)), default=None)
    if last is None:
        return [to_provider(m) for m in messages]
    info = messages[last]["compaction"]
    before = [to_provider(m) for m in messages[:last] if not _is_record(m)]
    after = [to_provider(m) for m in messages[last + 1 :] if not _is_record(m)]
    raw_head = info.get("head") if isinstance(info.get("head"), list) else []
    head = [h for m in raw_head if (h := _head_message(m)) is not None]
    k, pinned, gap = (_count(info, name, len(before)) for name in ("tail", "pinned", "gap"))
    end = len(before) - k  # the suffix kept is before[end:]
    pins = before[max(0, end - gap - pinned) : max(0, end - gap)] if pinned else []
    summary = {"role": "system", "content": messages[last]["content"]}
    # units() drops a result whose call the tail cut off (a damaged or hand-edited file).
    kept = head + [summary] + pins + before[end:] + after
    return [m for unit in units(kept) for m in unit]


def too_big(state: SessionState, fixed: int, estimate: int, d: AgentDefaults) -> str:
    """Why the turn stops budget_exhausted: the message itself, or the turn's context."""
    compress_at = int(d.token_budget * COMPRESS_AT)
    users = [m for m in state.history if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    text = without_time_line(content if isinstance(content, str) else json.dumps(content))
    size = state.estimator.estimate(users[-1:])
    base = state.estimator.scale(fixed)
    if base + size >= compress_at:
        return (
            f"Stopped: your message is too big for the context: ~{size:,} tokens "
            f"({len(text):,} characters) plus ~{base:,} for the system prompt and tools, "
            f"and tokenBudget is {d.token_budget:,} (the context must stay under 80 %, "
            f"~{compress_at:,}). Send a shorter message (or save the text to a file and "
            "ask picobot to read it), or raise agents.defaults.tokenBudget."
        )
    return (
        f"Stopped: the context of this turn (~{estimate:,} tokens) stays over 80 % of "
        f"tokenBudget ({d.token_budget:,}) even after compaction: the current message and "
        "the newest tool results must stay. Start a new session, or raise "
        "agents.defaults.tokenBudget."
    )

"""The model calls of a turn: the step's streamed call (retried on transient errors) turned
into events and the tool calls it asks for (session-unique ids, secrets masked); the
compaction's summary call; the tokens and cost of both."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from picobot_tui.core import budget as budget_mod
from picobot_tui.core import compaction
from picobot_tui.core.events import (
    ErrorEvent,
    Event,
    Retrying,
    TextDelta,
    ToolCallArgsDelta,
    UsageUpdated,
)
from picobot_tui.core.llm.accumulator import ToolCallAccumulator
from picobot_tui.core.llm.model import (
    LLMError,
    ModelClient,
    ModelRequest,
    ResentChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from picobot_tui.core.retries import CountResent, after_failure
from picobot_tui.core.secret_guard import DeltaMasker, mask_arguments
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.settings import AgentDefaults
from picobot_tui.core.tracing import CallTrace
from picobot_tui.core.turn_state import SessionState, TurnState, fresh_id

# The loop's logger: these lines belong to the turn's log.
log = logging.getLogger("picobot.loop")


async def call_model(
    model: ModelClient,
    request: ModelRequest,
    state: SessionState,
    turn: TurnState,
    calls: list[dict[str, Any]],
    *,
    defaults: AgentDefaults,
    scrub: Scrubber,
    sleep: Callable[[float], Awaitable[None]],
    cache_ttl_s: float = 0.0,
) -> AsyncIterator[Event]:
    """One model call with retries. Fills `turn.text` and `calls`; yields an ErrorEvent
    (and nothing after it) when the call finally fails. `cache_ttl_s`: how long a prefix
    this call marked for the provider's cache stays warm (0 when it marked none)."""
    failures = 0  # attempts of this call that failed
    resent = 0  # requests the client sent again on its own
    while True:
        turn.text.clear()
        acc = ToolCallAccumulator()
        ids: dict[str, str] = {}  # provider id -> the id this session uses
        maskers: dict[str, tuple[str, DeltaMasker]] = {}  # secrets out of the deltas
        usage: UsageChunk | None = None
        turn.llm_calls += 1
        try:
            async for chunk in model.stream(request):
                if isinstance(chunk, TextChunk):
                    if chunk.text:
                        turn.text.append(chunk.text)
                        yield TextDelta(chunk.text)
                elif isinstance(chunk, ToolCallChunk):
                    live = acc.add(chunk)
                    if live is not None:
                        if live[0] not in ids:
                            taken = state.call_ids | set(ids.values())
                            ids[live[0]] = fresh_id(live[0], taken)
                        cid = ids[live[0]]
                        masker = maskers.setdefault(cid, (live[1], DeltaMasker(scrub)))
                        delta = masker[1].feed(live[2])
                        if delta:
                            yield ToolCallArgsDelta(cid, live[1], delta)
                elif isinstance(chunk, UsageChunk):
                    usage = chunk
                elif isinstance(chunk, ResentChunk):
                    # Every HTTP request is a model call in the trace, and a re-send is
                    # a retry the user sees, even when LiteLLM made it.
                    resent += 1
                    turn.llm_calls += 1
                    turn.retries += 1
                    log.warning("the request was sent again: %s", chunk.reason)
                    yield Retrying(resent, 1, 0.0, "bad_request", chunk.reason)
            break
        except LLMError as e:
            failures += 1
            step = after_failure(e, failures, defaults)
            if isinstance(step, ErrorEvent):
                yield step
                return
            turn.retries += 1
            yield step
            await sleep(step.delay_s)
    for cid, (name, pending) in maskers.items():
        if rest := pending.flush():
            yield ToolCallArgsDelta(cid, name, rest)
    for call in acc.calls():
        call["id"] = ids.get(call["id"]) or fresh_id(call["id"], state.call_ids)
        state.call_ids.add(call["id"])
        fn = call["function"]
        fn["arguments"], leaked = mask_arguments(scrub, fn.get("arguments") or "")
        if leaked:
            turn.secret_calls.add(call["id"])
        calls.append(call)
    _account(request, state, turn, usage)
    turn.last_call = turn.calls[-1] if usage is not None else None
    cached = usage is not None and usage.cache_marked
    yield UsageUpdated(
        prompt_tokens=state.last_prompt_tokens,
        completion_tokens=state.last_completion_tokens,
        total_tokens=state.last_prompt_tokens + state.last_completion_tokens,
        cost=usage.cost if usage else None,
        session_cost=state.cost,
        estimated=usage is None,
        cache_read_tokens=usage.cache_read if usage else 0,
        cache_write_tokens=usage.cache_write if usage else 0,
        hit_rate=_rate(usage.cache_read, usage.prompt_tokens) if usage else None,
        session_hit_rate=_rate(state.cache_read, state.prompt_seen),
        session_saved=state.saved,
        cache_ttl_s=cache_ttl_s if cached else 0.0,
        rewrite_cost=usage.rewrite_cost if usage else None,
    )


def _rate(read: int, prompt: int) -> float | None:
    return read / prompt if prompt else None


def _count_cache(state: SessionState, turn: TurnState, usage: UsageChunk, kind: str) -> None:
    """The call's cache figures into the session's sums and the turn's trace."""
    state.prompt_seen += usage.prompt_tokens
    state.cache_read += usage.cache_read
    state.cache_write += usage.cache_write
    if usage.saved is not None:
        state.saved = (state.saved or 0.0) + usage.saved
    turn.calls.append(
        CallTrace(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_write,
            cache_write_1h_tokens=usage.cache_write_1h,
            reasoning_tokens=usage.reasoning,
            cost=usage.cost,
            kind=kind,
        )
    )


def _account(
    request: ModelRequest, state: SessionState, turn: TurnState, usage: UsageChunk | None
) -> None:
    """Add the call's tokens and cost to the turn and session, calibrating the estimator
    when the provider reported usage (chars/4 estimates when it did not)."""
    messages = request.messages
    if usage is not None:
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        # The reported figure covers the system prompt and tool schemas too; the
        # estimator holds the history's share so `estimate(history, fixed)` adds it back.
        # The history as held (the request's messages without the system prompt), so the
        # same history estimates to the reported figure.
        state.estimator.calibrate(state.history, prompt, state.fixed_tokens)
        _count_cache(state, turn, usage, "step")
        if usage.cost is not None:
            turn.cost = (turn.cost or 0.0) + usage.cost
            state.cost = (state.cost or 0.0) + usage.cost
    else:
        prompt = budget_mod.estimate_messages(messages)
        completion = budget_mod.estimate_text("".join(turn.text))
    state.last_prompt_tokens, state.last_completion_tokens = prompt, completion
    turn.prompt_tokens += prompt
    turn.completion_tokens += completion


async def summarise(
    model: ModelClient,
    model_name: str,
    dropped: list[dict[str, Any]],
    state: SessionState,
    turn: TurnState,
    room: int,
    d: AgentDefaults,
) -> tuple[str, int]:
    """The summary call: returns the text and its cost in tokens; LLMError on failure."""
    # The transcript may take what a normal call may: 75 % of the budget, in chars.
    max_chars = int(d.token_budget * budget_mod.KEEP_RATIO / state.estimator.ratio) * 4
    request = ModelRequest(
        model=model_name,
        messages=compaction.summary_request(dropped, max_chars - room * 4, room * 3 // 4),
        tools=[],
        max_tokens=min(d.max_tokens, room),
        temperature=d.temperature,
    )
    turn.llm_calls += 1
    counted = CountResent(model)
    try:
        text, usage = await compaction.summarise(counted, request)
    finally:  # a re-send is one more request, whether the summary came or not
        turn.llm_calls += counted.resent
        turn.retries += counted.resent
    if usage is not None:
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
        _count_cache(state, turn, usage, "summary")
        if usage.cost is not None:
            turn.cost = (turn.cost or 0.0) + usage.cost
            state.cost = (state.cost or 0.0) + usage.cost
    else:
        prompt = budget_mod.estimate_messages(request.messages)
        completion = budget_mod.estimate_text(text)
    turn.prompt_tokens += prompt
    turn.completion_tokens += completion
    return text, prompt + completion

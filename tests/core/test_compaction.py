"""Summarised compaction through the loop (scripted model): the summary call, the context
after it, the session record a resume reads back, the fallback, the ratio and the bound."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from picobot_tui.core.budget import COMPRESS_AT, estimate_messages, estimate_text
from picobot_tui.core.compaction import SUMMARY_HEADER
from picobot_tui.core.llm.model import LLMError, ModelRequest, TextChunk, UsageChunk
from picobot_tui.core.llm.scripted import tool_call
from tests.core.test_budget import assert_valid
from tests.core.test_loop import make, run, stored
from tests.support.sent import as_stored, words

BIG = "x" * 2400  # ~600 tokens


def is_summary_call(request: ModelRequest) -> bool:
    last = request.messages[-1]
    return not request.tools and last["role"] == "user" and "summary" in last["content"].lower()


def replies(summary: str = "SUMMARY-OF-EARLIER", ratio: float = 1.0, answer: str = "ok") -> Any:
    """A model that reports `ratio` x chars/4 as prompt tokens and writes `summary` when asked."""

    def step(request: ModelRequest) -> list[Any]:
        raw = estimate_messages(request.messages) + estimate_text(str(request.tools or ""))
        out = summary if is_summary_call(request) else answer
        return [TextChunk(out), UsageChunk(max(1, int(raw * ratio)), 5)]

    return step


def usage_of_request(chunks: list[Any]) -> Any:
    """A scripted step whose usage reports chars/4 of the request, like a provider."""

    def step(request: ModelRequest) -> list[Any]:
        raw = estimate_messages(request.messages) + estimate_text(str(request.tools or ""))
        return [*chunks[:-1], UsageChunk(raw, 5)]

    return step


def main_requests(model: Any) -> list[ModelRequest]:
    return [r for r in model.requests if not is_summary_call(r)]


async def test_summary_replaces_the_dropped_middle_and_is_stored() -> None:
    rt, model, _ = make(default=replies(), token_budget=4000)
    session = None
    events: list[Any] = []
    for i in range(8):
        out, session = await run(rt, f"q{i} " + BIG, session)
        assert out[-1].outcome == "final"
        events += out
    done = [e for e in events if e.type == "history_compressed"]
    assert done and all(e.strategy == "summarize" for e in done)
    assert done[0].summary == "SUMMARY-OF-EARLIER" and done[0].extra_tokens > 0
    summary_calls = [r for r in model.requests if is_summary_call(r)]
    assert len(summary_calls) == len(done)
    # The summary call asks for a summary of the dropped messages, as its last message.
    assert "USER: q2 " in summary_calls[0].messages[-1]["content"]  # q0, q1: the head
    # The next call carries the summary as one labelled message, the question last.
    after = model.requests[model.requests.index(summary_calls[0]) + 1]
    labelled = [m for m in after.messages if str(m["content"]).startswith(SUMMARY_HEADER)]
    assert len(labelled) == 1 and labelled[0]["content"].endswith("SUMMARY-OF-EARLIER")
    assert after.messages[1]["content"].startswith("q0 ")  # the first exchange stays
    assert after.messages[-1]["content"].startswith("q")
    # Every original message stays in the file, beside the compaction records.
    lines = stored(rt, session.key)
    assert len([m for m in lines if "compaction" not in m]) == 8 * 2
    assert len([m for m in lines if "compaction" in m]) == len(done)


async def test_a_resume_sees_the_same_context() -> None:
    rt, model, _ = make(default=replies(), token_budget=4000)
    session = None
    for i in range(7):
        _, session = await run(rt, f"q{i} " + BIG, session)
    assert any("compaction" in m for m in stored(rt, session.key))
    live = [dict(m) for m in rt.loop._states[session.key].history]
    session.close()
    rt2, model2, _ = make(default=replies(), token_budget=4000)
    resumed = rt2.store.open(session.key, create=False)
    await run(rt2, "next question", resumed)
    sent = main_requests(model2)[0].messages[1:]
    # Byte for byte what the live process held, time lines included (a cached prefix).
    assert sent[:-1] == live
    assert as_stored(sent[-1:]) == [{"role": "user", "content": "next question"}]


async def test_a_failed_summary_call_falls_back_to_dropping() -> None:
    def step(request: ModelRequest) -> list[Any]:
        if is_summary_call(request):
            return [LLMError("boom", kind="server", transient=False)]
        return replies()(request)

    rt, model, _ = make(default=step, token_budget=4000)
    session = None
    events: list[Any] = []
    for i in range(8):
        out, session = await run(rt, f"q{i} " + BIG, session)
        assert out[-1].outcome == "final"
        events += out
    notices = [e for e in events if e.type == "notice" and e.kind == "compaction"]
    done = [e for e in events if e.type == "history_compressed"]
    assert notices and "boom" in notices[0].message
    assert done and done[0].strategy == "drop" and done[0].summary == ""


async def test_drop_strategy_makes_no_extra_call() -> None:
    rt, model, _ = make(default=replies(), token_budget=4000, compaction="drop")
    session = None
    for i in range(8):
        out, session = await run(rt, f"q{i} " + BIG, session)
        assert out[-1].outcome == "final"
    assert not any(is_summary_call(r) for r in model.requests)


async def test_a_message_too_big_stops_without_calling_the_model() -> None:
    rt, model, _ = make(default=replies(), token_budget=5000)
    events, _ = await run(rt, "What is this? " + "y" * 30_000)
    final = events[-1]
    assert final.outcome == "budget_exhausted"
    assert "30,014 characters" in final.content and "5,000" in final.content
    assert model.requests == []


async def test_current_turn_tool_exchanges_survive() -> None:
    """Wrong-today 2: a compaction in the first exchange dropped every round of the turn."""
    steps: list[Any] = [
        usage_of_request(tool_call("read_file", {"path": f"big{i}.txt"}, call_id=f"c{i}"))
        for i in range(6)
    ]
    rt, model, _ = make(steps, token_budget=6000, default=replies(answer="done"))
    for i in range(6):
        (rt.settings.workspace_path / f"big{i}.txt").write_text(f"{i}" * 4000)
    events, session = await run(rt, "question one " + "q" * 2000)
    assert events[-1].outcome == "final"
    assert any(e.type == "history_compressed" for e in events)
    last = main_requests(model)[-1].messages
    users = [m["content"] for m in last if m["role"] == "user"]
    assert len(users) == 1 and users[0].startswith("question one")
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) >= 2 and "5555" in results[-1] and "0000" not in "".join(results)
    assert_valid([m for m in last if m["role"] != "system"])
    # The record says where the kept user message is, so a resume rebuilds the same context.
    live = [dict(m) for m in rt.loop._states[session.key].history]
    session.close()
    rt2, _, _ = make(default=replies(), token_budget=6000)
    resumed = rt2.store.open(session.key, create=False)
    assert rt2.loop._state(resumed).history == live


async def test_long_session_at_double_token_ratio_keeps_going() -> None:
    """Wrong-today 3: real tokens at 2x chars/4; every turn ends final, every call fits."""
    budget = 5000
    rt, model, _ = make(default=replies(ratio=2.0), token_budget=budget)
    session = None
    for i in range(30):
        out, session = await run(rt, f"turn {i} " + "w" * 1200, session)
        assert out[-1].outcome == "final", out[-1].content
    for req in main_requests(model):
        real = 2 * (estimate_messages(req.messages) + estimate_text(str(req.tools)))
        assert real < budget  # the provider never sees more than the budget


async def test_max_history_messages_bounds_a_long_process() -> None:
    """Wrong-today 10: the bound held only on resume."""
    rt, model, _ = make(default=replies(), max_history_messages=10)
    session = None
    for i in range(30):
        _, session = await run(rt, f"u{i}", session)
    sizes = [len(r.messages) - 1 for r in model.requests]  # without the system prompt
    assert max(sizes) <= 10
    assert words(model.requests[-1].messages[-1]) == "u29"
    assert len(stored(rt, session.key)) == 60


async def test_compact_command_uses_the_same_path() -> None:
    rt, model, _ = make(default=replies(summary="BY-COMPACT"), token_budget=20000)
    session = None
    for i in range(6):
        _, session = await run(rt, f"q{i} " + BIG, session)
    events = [e async for e in rt.loop.compact(session)]
    done = [e for e in events if e.type == "history_compressed"]
    assert done and done[0].summary == "BY-COMPACT"
    assert events[-1].type == "budget" and events[-1].estimated_tokens < done[0].before_tokens
    assert any("compaction" in m for m in stored(rt, session.key))


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 20_000), min_size=1, max_size=12),
    budget=st.integers(2000, 30_000),
    ratio=st.floats(0.5, 3.0),
    strategy=st.sampled_from(["summarize", "drop"]),
)
def test_loop_properties(sizes: list[int], budget: int, ratio: float, strategy: str) -> None:
    """Random sessions, budgets and ratios through the loop: every call carries the current
    question and valid tool pairs at an estimate under the threshold; otherwise the turn
    ends budget_exhausted before any call."""
    asyncio.run(_loop_properties(sizes, budget, ratio, strategy))


async def _loop_properties(sizes: list[int], budget: int, ratio: float, strategy: str) -> None:
    rt, model, _ = make(default=replies(ratio=ratio), token_budget=budget, compaction=strategy)
    session = None
    threshold = int(budget * COMPRESS_AT)
    for i, size in enumerate(sizes):
        before = len(model.requests)
        question = f"Q{i} " + "m" * size
        events, session = await run(rt, question, session)
        outcome = events[-1].outcome
        new = [r for r in model.requests[before:] if not is_summary_call(r)]
        gauges = [e.estimated_tokens for e in events if e.type == "budget"]
        if outcome == "budget_exhausted":
            assert new == [] and gauges[-1] >= threshold
            continue
        assert outcome == "final"
        assert gauges and all(g < threshold for g in gauges)
        for req in new:
            assert words(req.messages[-1]) == question
            assert_valid([m for m in req.messages if m["role"] != "system"])
    # A resume rebuilds from the session file exactly the context the process holds.
    live = [dict(m) for m in rt.loop._states[session.key].history]
    session.close()
    rt2, _, _ = make(token_budget=budget, compaction=strategy)
    assert rt2.loop._state(rt2.store.open(session.key, create=False)).history == live

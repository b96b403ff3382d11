"""Compaction cuts and the message bound: they keep the current message and turn, never split
a tool pair, and land under the threshold (or say the turn cannot fit)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from picobot_tui.core.budget import (
    COMPACTED_PREFIX,
    COMPRESS_AT,
    KEEP_RATIO,
    SHORTENED,
    TokenEstimator,
    bound_history,
    compress,
    estimate_messages,
    minimum_budget,
    units,
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
            for i in ids
        ],
    }


def result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": "read_file", "content": text}


def conversation(n: int, big: int = 400) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for i in range(n):
        msgs += [
            user(f"question {i} " + "x" * big),
            calls(f"c{i}a", f"c{i}b"),
            result(f"c{i}a", "r" * big),
            result(f"c{i}b", "r" * big),
            reply(f"answer {i} " + "y" * big),
        ]
    return msgs


def assert_valid(msgs: list[dict[str, Any]]) -> None:
    """Every tool_calls message is followed by exactly its results; no orphan results."""
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m["role"] != "tool", f"orphan tool result at {i}"
        i += 1
        if m.get("tool_calls"):
            want = {c["id"] for c in m["tool_calls"]}
            got = set()
            while i < len(msgs) and msgs[i]["role"] == "tool":
                got.add(msgs[i]["tool_call_id"])
                i += 1
            assert got == want


def test_units_keep_pairs_and_drop_orphans() -> None:
    msgs = [result("x"), user("hi"), calls("a"), result("a"), reply("done")]
    grouped = units(msgs)
    assert [len(u) for u in grouped] == [1, 2, 1]
    assert grouped[1][1]["tool_call_id"] == "a"


def summary(text: str = "earlier") -> dict[str, Any]:
    return {"role": "system", "content": f"{COMPACTED_PREFIX} {text}"}


def test_compress_keeps_head_exchanges_and_recent_tail() -> None:
    msgs = conversation(40)
    budget = estimate_messages(msgs) // 3
    cut = compress(msgs, budget)
    kept = cut.messages
    assert cut.dropped and cut.removed > 0
    assert estimate_messages(kept) <= int(budget * KEEP_RATIO)
    assert kept[0]["content"].startswith("question 0")
    assert kept[1]["content"].startswith("answer 0")
    assert kept[2]["content"].startswith("question 1")
    assert kept[-1]["content"].startswith("answer 39")
    assert_valid(kept)
    # What is dropped is exactly what the summary has to cover, in order.
    assert cut.dropped[0]["role"] == "assistant" and cut.dropped[0].get("tool_calls")
    assert {id(m) for m in cut.dropped}.isdisjoint({id(m) for m in kept})


def test_compress_accounts_for_fixed_tokens() -> None:
    msgs = conversation(20)
    budget = estimate_messages(msgs)
    loose = compress(msgs, budget, fixed_tokens=0)
    tight = compress(msgs, budget, fixed_tokens=budget // 2)
    assert len(tight.messages) < len(loose.messages)


def test_a_huge_current_message_is_never_dropped() -> None:
    """Wrong-today 1: the 'first exchanges' could be emptied and the current message lost."""
    msgs = [user("hello"), reply("hi"), user("Q? " + "x" * 30_000)]
    cut = compress(msgs, 5000, fixed_tokens=1250)
    assert cut.messages[-1] is msgs[-1]
    # It cannot fit: the caller sees an estimate over the threshold and stops the turn.
    assert estimate_messages(cut.messages) + 1250 > 5000 * COMPRESS_AT


def test_current_turn_tool_rounds_survive_a_first_turn_compaction() -> None:
    """Wrong-today 2: compacting during the first exchange kept none of the turn's rounds."""
    msgs = [user("do the work")]
    for i in range(6):
        msgs += [calls(f"c{i}"), result(f"c{i}", "r" * 1200)]
    budget = 6000  # 75 %: 4,500 tokens, the whole turn is ~1,900
    cut = compress(msgs, budget, fixed_tokens=1250)
    assert cut.messages == msgs and not cut.changed
    # Tighter: the oldest rounds go first, the user message and the newest rounds stay.
    cut = compress(msgs, 3000, fixed_tokens=1250)
    kept = cut.messages
    assert kept[0] is msgs[0] and kept[-1] is msgs[-1] and kept[-2] is msgs[-2]
    assert 1 < len(kept) < len(msgs)
    assert cut.dropped[0] is msgs[1]
    assert_valid(kept)


def test_cut_scales_with_the_provider_ratio() -> None:
    """Wrong-today 3: at 2x real tokens per chars/4 the cut must go twice as deep."""
    msgs = conversation(30)
    budget = estimate_messages(msgs) // 2
    plain = compress(msgs, budget)
    double = compress(msgs, budget, ratio=2.0)
    assert estimate_messages(double.messages) * 2 <= budget * KEEP_RATIO
    assert len(double.messages) < len(plain.messages)


def test_head_is_shortened_then_dropped_beyond_a_quarter() -> None:
    msgs = [user("a" * 8000), reply("b" * 8000), user("c" * 100), reply("d"), user("now?")]
    cut = compress(msgs, 8000)  # a quarter: 2,000 tokens; the head alone is ~4,000
    head = cut.head
    assert head and all(m["content"].endswith(SHORTENED) for m in head if len(m["content"]) > 200)
    assert estimate_messages(head) <= 8000 // 4
    one = compress(msgs, 800)  # 200 tokens: only the first exchange, shortened
    assert [m["role"] for m in one.head] == ["user", "assistant"]
    tiny = compress(msgs, 400)  # 100 tokens: nothing useful fits, the head goes
    assert tiny.head == [] and tiny.messages[-1] is msgs[-1]


def test_an_earlier_summary_is_replaced_not_kept() -> None:
    msgs = [user("q0"), reply("a0"), summary(), *conversation(10)[5:], user("now")]
    cut = compress(msgs, estimate_messages(msgs) // 2)
    assert not any(str(m.get("content")).startswith(COMPACTED_PREFIX) for m in cut.messages)
    assert cut.dropped[0]["content"].startswith(COMPACTED_PREFIX)
    assert [m["content"] for m in cut.head] == ["q0", "a0"]


def test_bound_history_on_resume() -> None:
    msgs = conversation(30)
    kept = bound_history(msgs, 12)
    assert len(kept) <= 12
    assert kept[0]["content"].startswith("question 0")
    assert kept[1]["content"].startswith("answer 0")
    assert kept[-1]["content"].startswith("answer 29")
    assert_valid(kept)


def test_bound_history_short_session_is_unchanged() -> None:
    msgs = conversation(2)
    assert bound_history(msgs, 50) == msgs


def test_bound_keeps_the_current_message_of_a_long_turn() -> None:
    msgs = [*conversation(3), user("the question")]
    for i in range(40):
        msgs += [calls(f"t{i}"), result(f"t{i}")]
    kept = bound_history(msgs, 10)
    assert len(kept) <= 10 and kept[-1] is msgs[-1]
    assert any(m is msgs[15] for m in kept)  # "the question"
    assert_valid(kept)


def test_bound_keeps_the_summary_prefix() -> None:
    msgs = [user("q0"), reply("a0"), summary(), *conversation(20)[:-1]]
    kept = bound_history(msgs, 12)
    assert [m["content"] for m in kept[:2]] == ["q0", "a0"]
    assert kept[2]["content"].startswith(COMPACTED_PREFIX)
    assert len(kept) <= 12 and kept[-1] is msgs[-1]


def _first_exchange(full: list[dict[str, Any]]) -> list[Any]:
    """TURN-1 and the message that ended turn 1 (its answer), read off the whole history."""
    first = next(i for i, m in enumerate(full) if m["role"] == "user")
    end = next(
        (
            m
            for m in full[first + 1 :]
            if m["role"] == "user" or (m["role"] == "assistant" and not m.get("tool_calls"))
        ),
        None,
    )
    answer = end if end is not None and end["role"] == "assistant" else None
    return [full[first]["content"], answer["content"] if answer and answer["content"] else None]


@settings(max_examples=200, deadline=None)
@given(
    turns=st.lists(
        st.tuples(st.integers(0, 4), st.booleans()),  # tool rounds, answered?
        min_size=2,
        max_size=25,
    ),
    limit=st.integers(4, 20),
)
def test_repeated_bounds_keep_the_first_exchange(turns: list[tuple[int, bool]], limit: int) -> None:
    """A long-running process (--json, the TUI, the library) bounds the history it already
    bounded, once per model call: the first exchange stays TURN-1 with turn 1's answer after
    any number of bounds (it went out as TURN-1 with ANSWER-4), as on a resume of the file."""
    full: list[dict[str, Any]] = []
    live: list[dict[str, Any]] = []

    def add(msg: dict[str, Any]) -> None:
        full.append(msg)
        live.append(msg)

    for n, (rounds, answered) in enumerate(turns):
        add(user(f"TURN-{n + 1}"))
        for r in range(rounds + 1):
            if len(live) > limit:  # what the loop does before each model call
                live[:] = bound_history(live, limit)
                expected = _first_exchange(full)
                resumed = bound_history(full, limit)
                for bounded in (live, resumed):
                    assert_valid(bounded)
                    if n == 0 or bounded[0]["content"] != expected[0]:
                        continue  # turn 1 is the current one, or gave way to it (no room)
                    second = bounded[1] if len(bounded) > 1 else None
                    if expected[1] is None:
                        assert second is None or second["role"] == "user", (expected, bounded)
                    else:
                        assert second is not None and second["content"] == expected[1]
            if r < rounds:
                add(calls(f"c{n}_{r}"))
                add(result(f"c{n}_{r}"))
        if answered:
            add(reply(f"ANSWER-{n + 1}"))


@settings(max_examples=150, deadline=None)
@given(
    shape=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 600)), min_size=1, max_size=40),
    limit=st.integers(2, 30),
    budget=st.integers(1000, 20000),
)
def test_cuts_never_split_tool_pairs(shape: list[tuple[int, int]], limit: int, budget: int) -> None:
    msgs: list[dict[str, Any]] = []
    for n, (ncalls, size) in enumerate(shape):
        msgs.append(user("u" * size))
        if ncalls:
            ids = [f"c{n}_{k}" for k in range(ncalls)]
            msgs.append(calls(*ids))
            msgs += [result(i, "r" * size) for i in ids]
        msgs.append(reply("a" * size))
    bounded = bound_history(msgs, limit)
    assert len(bounded) <= max(limit, 0) or len(msgs) <= limit
    assert_valid(bounded)
    assert_valid(compress(msgs, budget).messages)


def random_session(draw: Any) -> list[dict[str, Any]]:
    """Earlier turns (maybe with a summary after the first two), then a current turn of
    tool rounds in progress; message sizes from empty to ~40 KB."""
    size = st.one_of(st.integers(0, 400), st.integers(400, 40_000))
    msgs: list[dict[str, Any]] = []
    turns = draw(st.integers(0, 12))
    for n in range(turns):
        msgs.append(user(f"u{n} " + "u" * draw(size)))
        for r in range(draw(st.integers(0, 2))):
            ids = [f"c{n}_{r}_{k}" for k in range(draw(st.integers(1, 2)))]
            msgs.append(calls(*ids))
            msgs += [result(i, "r" * draw(size)) for i in ids]
        msgs.append(reply(f"a{n} " + "a" * draw(size)))
        if n == 1 and draw(st.booleans()):
            msgs.append(summary("s" * draw(st.integers(0, 2000))))
    msgs.append(user("CURRENT " + "q" * draw(size)))
    for r in range(draw(st.integers(0, 5))):
        msgs.append(calls(f"now{r}"))
        msgs.append(result(f"now{r}", "t" * draw(size)))
    return msgs


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    budget=st.integers(2000, 200_000),
    ratio=st.floats(0.5, 4.0),
    fixed=st.integers(0, 1500),
)
def test_compaction_properties(data: Any, budget: int, ratio: float, fixed: int) -> None:
    """Over random sessions, budgets and provider ratios: the current message is kept, tool
    pairs are valid, and the estimate is under the threshold, or the must-keep part (the
    current message and the turn's newest round) alone is over it: budget_exhausted."""
    msgs = random_session(data.draw)
    current = max(i for i, m in enumerate(msgs) if m["role"] == "user")
    reserve = 100
    cut = compress(msgs, budget, fixed, ratio=ratio, reserve=reserve)
    kept = [*cut.head, summary(), *cut.tail]
    assert any(m is msgs[current] for m in cut.tail)
    assert_valid(kept)
    est = TokenEstimator(ratio)
    threshold = int(budget * COMPRESS_AT)
    turn = units(msgs[current:])
    must = [*turn[0], *(turn[-1] if len(turn) > 1 else [])]
    if est.estimate(must, fixed + reserve) <= int(budget * KEEP_RATIO):
        assert est.estimate(cut.messages, fixed + reserve) <= int(budget * KEEP_RATIO)
        assert est.estimate(cut.messages, fixed + reserve) < threshold
        # The whole current turn stays whenever it fits.
        if est.estimate(msgs[current:], fixed + reserve) <= int(budget * KEEP_RATIO):
            assert cut.tail[-len(msgs[current:]) :] == msgs[current:]
    else:
        assert cut.tail[-len(must) :] == must  # kept even so; the loop stops the turn
    # Every message is kept, dropped (for the summary) or stands shortened in the head.
    accounted = {id(m) for m in cut.messages} | {id(m) for m in cut.dropped}
    missing = [m for m in msgs if id(m) not in accounted]
    copies = [h for h in cut.head if all(h is not m for m in msgs)]
    assert len(missing) == len(copies)
    for original, copy in zip(missing, copies, strict=True):
        assert copy["content"].removesuffix(SHORTENED) in original["content"]


def test_estimator_scales_chars_by_the_reported_ratio() -> None:
    est = TokenEstimator()
    msgs = conversation(3)
    raw = estimate_messages(msgs)
    assert est.estimate(msgs) == raw
    est.calibrate(msgs, raw * 2, extra=0)
    assert est.estimate(msgs) == raw * 2
    # The ratio holds for messages never sent (a compacted context, new messages).
    assert est.estimate(msgs[5:]) == estimate_messages(msgs[5:]) * 2
    # A provider that reports next to nothing cannot make the context look empty.
    est.calibrate(msgs, 10)
    assert est.ratio == 0.5


def test_minimum_budget_leaves_room_above_the_fixed_cost() -> None:
    assert minimum_budget(1250) == 1900
    assert minimum_budget(1250) * COMPRESS_AT >= 1250 + 256

"""Compression and the resume bound never split a tool pair and keep the right ends."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from picobot_tui.core.budget import (
    TokenEstimator,
    bound_history,
    compress,
    estimate_messages,
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


def test_compress_keeps_head_exchanges_and_recent_tail() -> None:
    msgs = conversation(40)
    budget = estimate_messages(msgs) // 3
    cut = compress(msgs, budget)
    kept = cut.messages
    assert cut.dropped > 0
    assert estimate_messages(kept) <= int(budget * 0.75)
    assert kept[0]["content"].startswith("question 0")
    assert kept[1]["content"].startswith("answer 0")
    assert kept[2]["content"].startswith("question 1")
    assert kept[-1]["content"].startswith("answer 39")
    assert_valid(kept)


def test_compress_accounts_for_fixed_tokens() -> None:
    msgs = conversation(20)
    budget = estimate_messages(msgs)
    loose = compress(msgs, budget, fixed_tokens=0)
    tight = compress(msgs, budget, fixed_tokens=budget // 2)
    assert len(tight.messages) < len(loose.messages)


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


def test_estimator_calibrates_and_only_estimates_new_messages() -> None:
    est = TokenEstimator()
    msgs = conversation(3)
    raw = est.estimate(msgs)
    assert raw == estimate_messages(msgs)
    est.calibrate(msgs, 5000)
    assert est.estimate(msgs) == 5000
    extra = user("z" * 400)
    msgs.append(extra)
    assert est.estimate(msgs) == 5000 + estimate_messages([extra])
    # A rewritten history (compression) no longer matches the calibration.
    assert est.estimate(msgs[5:]) == estimate_messages(msgs[5:])

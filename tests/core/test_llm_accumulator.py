"""ToolCallAccumulator: reassembling streamed tool-call fragments (no LiteLLM needed)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.core.llm.accumulator import ToolCallAccumulator
from picobot_tui.core.llm.model import ToolCallChunk as TC


def _feed(chunks: list[TC]) -> ToolCallAccumulator:
    acc = ToolCallAccumulator()
    for c in chunks:
        acc.add(c)
    return acc


def _summary(acc: ToolCallAccumulator) -> list[tuple[str, str, str]]:
    return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in acc.calls()]


def _fragment(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:], strict=False)] or [""]


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
arg_strings = st.one_of(
    st.text(max_size=80),
    st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=10), max_size=4).map(
        json.dumps
    ),
)
cut_lists = st.lists(st.integers(min_value=0, max_value=200), max_size=12)


def test_single_call_openai_format():
    acc = _feed(
        [
            TC(0, "call_a", "read_file", '{"pa'),
            TC(0, None, None, 'th": "x"}'),
        ]
    )
    assert acc.calls() == [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "x"}'},
        }
    ]


def test_add_returns_live_progress():
    acc = ToolCallAccumulator()
    assert acc.add(TC(0, "id1", "wri", "")) == ("id1", "wri", "")
    assert acc.add(TC(0, None, "te", '{"a"')) == ("id1", "write", '{"a"')
    assert acc.add(TC(0, None, None, ": 1}")) == ("id1", "write", ": 1}")
    assert acc.add(TC(None, None, None, None)) is None
    assert acc.add(TC(0, "", "", "")) is None
    assert _summary(acc) == [("id1", "write", '{"a": 1}')]


def test_parallel_by_index_interleaved():
    acc = _feed(
        [
            TC(0, "a", "fa", "{"),
            TC(1, "b", "fb", "["),
            TC(0, None, None, "}"),
            TC(1, None, None, "]"),
        ]
    )
    assert _summary(acc) == [("a", "fa", "{}"), ("b", "fb", "[]")]


def test_groq_style_no_index_new_id_starts_a_call():
    acc = _feed(
        [
            TC(None, "a", "fa", '{"x"'),
            TC(None, None, None, ": 1}"),
            TC(None, "b", "fb", '{"y"'),
            TC(None, None, None, ": 2}"),
        ]
    )
    assert _summary(acc) == [("a", "fa", '{"x": 1}'), ("b", "fb", '{"y": 2}')]


def test_litellm_fills_missing_index_with_zero_new_id_still_splits():
    # LiteLLM turns a missing index into 0: a new id at index 0 must start a new call.
    acc = _feed(
        [
            TC(0, "a", "fa", "{"),
            TC(0, None, None, "}"),
            TC(0, "b", "fb", "{"),
            TC(0, None, None, "}"),
        ]
    )
    assert _summary(acc) == [("a", "fa", "{}"), ("b", "fb", "{}")]


def test_repeated_identical_id_continues():
    acc = _feed([TC(0, "a", "f", "{"), TC(0, "a", None, '"k": 1'), TC(None, "a", None, "}")])
    assert _summary(acc) == [("a", "f", '{"k": 1}')]


def test_missing_ids_are_synthesised_and_unique():
    acc = _feed(
        [
            TC(0, None, "fa", "{}"),
            TC(1, None, "fb", "{}"),
            TC(2, "call_0", "fc", "{}"),  # a real id that collides with a synthesised one
        ]
    )
    ids = [c["id"] for c in acc.calls()]
    assert ids[:2] == ["call_0", "call_1"]
    assert len(set(ids)) == 3


def test_duplicate_real_ids_across_indexes_are_made_unique():
    acc = _feed([TC(0, "same", "a", "{}"), TC(1, "same", "b", "{}")])
    ids = [c["id"] for c in acc.calls()]
    assert ids[0] == "same" and ids[1] != "same" and len(set(ids)) == 2


def test_late_id_is_kept_for_matching_but_the_shown_id_is_stable():
    acc = ToolCallAccumulator()
    first = acc.add(TC(0, None, "f", "{"))
    later = acc.add(TC(0, "real", None, "}"))
    assert first is not None and later is not None
    assert first[0] == later[0] == "call_0"
    assert _summary(acc) == [("call_0", "f", "{}")]


def test_repeated_whole_name_is_not_doubled():
    acc = _feed([TC(0, "a", "read_file", "{"), TC(0, None, "read_file", "}")])
    assert _summary(acc) == [("a", "read_file", "{}")]


def test_lone_id_without_name_or_arguments_is_dropped():
    acc = _feed([TC(0, "a", "f", "{}"), TC(1, "ghost", None, None)])
    assert [c["id"] for c in acc.calls()] == ["a"]
    assert len(acc) == 2


def test_empty_accumulator():
    assert ToolCallAccumulator().calls() == []


@given(st.lists(st.tuples(names, arg_strings, cut_lists), min_size=1, max_size=4))
def test_indexed_calls_reassemble_exactly(calls):
    chunks = []
    for i, (name, args, cuts) in enumerate(calls):
        for j, frag in enumerate(_fragment(args, cuts)):
            chunks.append(TC(i, f"id{i}" if j == 0 else None, name if j == 0 else None, frag))
    acc = _feed(chunks)
    assert _summary(acc) == [(f"id{i}", n, a) for i, (n, a, _) in enumerate(calls)]


@given(
    st.lists(st.tuples(names, arg_strings, cut_lists), min_size=1, max_size=4),
    st.randoms(use_true_random=False),
)
def test_interleaved_indexed_calls_reassemble_exactly(calls, rnd):
    queues = []
    for i, (name, args, cuts) in enumerate(calls):
        frags = _fragment(args, cuts)
        queues.append(
            [
                TC(i, f"id{i}" if j == 0 else None, name if j == 0 else None, f)
                for j, f in enumerate(frags)
            ]
        )
    chunks = []
    # Every call's first fragment comes first (in index order), then the rest shuffled.
    for q in queues:
        chunks.append(q.pop(0))
    while any(queues):
        q = rnd.choice([q for q in queues if q])
        chunks.append(q.pop(0))
    acc = _feed(chunks)
    assert _summary(acc) == [(f"id{i}", n, a) for i, (n, a, _) in enumerate(calls)]


@given(
    st.lists(st.tuples(names, arg_strings, cut_lists), min_size=1, max_size=4),
    st.sampled_from([None, 0]),
)
def test_groq_style_sequential_calls_reassemble_exactly(calls, index):
    chunks = []
    for i, (name, args, cuts) in enumerate(calls):
        for j, frag in enumerate(_fragment(args, cuts)):
            chunks.append(TC(index, f"g{i}" if j == 0 else None, name if j == 0 else None, frag))
    acc = _feed(chunks)
    assert _summary(acc) == [(f"g{i}", n, a) for i, (n, a, _) in enumerate(calls)]


@given(st.lists(st.tuples(names, arg_strings, cut_lists), min_size=1, max_size=4))
def test_calls_without_ids_reassemble_with_synthesised_ids(calls):
    chunks = []
    for i, (name, args, cuts) in enumerate(calls):
        for j, frag in enumerate(_fragment(args, cuts)):
            chunks.append(TC(i, None, name if j == 0 else None, frag))
    acc = _feed(chunks)
    assert _summary(acc) == [(f"call_{i}", n, a) for i, (n, a, _) in enumerate(calls)]


@given(names, st.lists(st.integers(min_value=0, max_value=12), max_size=5), arg_strings)
def test_split_names_reassemble(name, cuts, args):
    parts = [p for p in _fragment(name, cuts) if p]
    chunks = [TC(0, "x" if k == 0 else None, p, None) for k, p in enumerate(parts)]
    chunks.append(TC(0, None, None, args))
    acc = _feed(chunks)
    calls = acc.calls()
    assert calls[0]["function"]["arguments"] == args
    # a fragment equal to the whole name so far is treated as a repeat, so only names
    # whose fragments never repeat the prefix are guaranteed to round-trip exactly
    built = ""
    for p in parts:
        if p != built:
            built += p
    assert calls[0]["function"]["name"] == built

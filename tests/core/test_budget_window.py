"""The maxHistoryMessages window moves in steps (issue 24): calls between two moves send
the same messages up to their newest (so a provider's prompt cache reads them), a resumed
process computes the same window from the file as the live one holds, and the seed's bounds
(at most the limit, no split tool pair, the first exchange kept) still hold."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from picobot_tui.core.budget import bound_history, bound_window, window_step
from tests.core.test_budget import assert_valid, calls, reply, result, user


def _turns(draw_turns: list[tuple[int, bool]]) -> list[list[dict[str, Any]]]:
    """The messages each model call adds before it: a user message, or a tool round."""
    steps: list[list[dict[str, Any]]] = []
    for n, (rounds, answered) in enumerate(draw_turns):
        steps.append([user(f"TURN-{n + 1}")])
        for r in range(rounds):
            steps.append([calls(f"c{n}_{r}"), result(f"c{n}_{r}")])
        if answered:
            steps.append([reply(f"ANSWER-{n + 1}")])  # not a call: joins the next one
    return steps


@settings(max_examples=300, deadline=None)
@given(
    turns=st.lists(
        st.tuples(st.integers(0, 3), st.booleans()),  # tool rounds, answered?
        min_size=2,
        max_size=30,
    ),
    limit=st.integers(10, 40),
)
def test_the_window_moves_in_steps_and_a_resume_sees_the_same(
    turns: list[tuple[int, bool]], limit: int
) -> None:
    step = window_step(limit)
    full: list[dict[str, Any]] = []
    live: list[dict[str, Any]] = []
    skipped = 0
    sent_before: list[dict[str, Any]] | None = None
    moves = 0
    for added in _turns(turns):
        full += added
        live += added
        if added[0]["role"] == "assistant" and not added[0].get("tool_calls"):
            continue  # an answer ends the turn: no call follows it
        window = bound_window(live, limit, step=step, skipped=skipped)
        live[:], moved_by = window.messages, window.skipped - skipped
        skipped = window.skipped
        assert len(live) <= limit
        assert_valid(live)
        # What a process resumed from the file would send: the same messages.
        resumed = bound_window(full, limit, step=step).messages
        assert resumed == live
        assert skipped == bound_window(full, limit, step=step).skipped
        # The seed's first exchange, then a run of the newest messages.
        seed = bound_history(full, limit)
        head = 2 if len(seed) > 1 and seed[1]["role"] == "assistant" else 1
        assert live[:head] == seed[:head]
        assert live[head:] == full[len(full) - len(live) + head :]
        if sent_before is not None and live[: len(sent_before)] != sent_before:
            moves += 1
            # Only a move of the start changes what was sent, or the first bound, which
            # leaves the first turn's tool rounds out of the first exchange.
            assert moved_by > 0 or moves == 1
        sent_before = list(live)
    # Each move passes a whole step of the history: sliding by what each call added
    # moved the start on every call once the window was full.
    assert moves <= len(full) // step + 1


def test_a_long_session_moves_its_start_once_a_step_not_every_call() -> None:
    limit, step = 50, window_step(50)
    assert step == 12
    live: list[dict[str, Any]] = []
    skipped = 0
    starts: list[Any] = []
    for n in range(40):  # 40 turns of one tool round: 4 messages each, 160 in all
        for added in ([user(f"TURN-{n}")], [calls(f"c{n}"), result(f"c{n}")]):
            live += added
            window = bound_window(live, limit, step=step, skipped=skipped)
            live[:], skipped = window.messages, window.skipped
            starts.append(live[2]["content"] if len(live) > 2 else None)
        live.append(reply(f"ANSWER-{n}"))
    changes = sum(1 for a, b in zip(starts, starts[1:], strict=False) if a != b)
    # Sliding by two a call changed the start on each of the ~55 calls after the window
    # filled; in steps of 12 it changes once every ~3 turns.
    assert 0 < changes <= 12
    assert live[0]["content"] == "TURN-0" and live[1]["content"] == "ANSWER-0"
    unbounded = bound_history(live, limit)
    assert [m["content"] for m in unbounded[:2]] == ["TURN-0", "ANSWER-0"]

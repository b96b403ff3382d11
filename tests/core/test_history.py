"""Repairing stored messages into a conversation the provider accepts."""

from __future__ import annotations

from typing import Any

from picobot_tui.core.history import INTERRUPTED_RESULT, heal_orphans, repair, to_provider
from tests.core.test_budget import assert_valid, calls, reply, result, user


class FakeSession:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self.appended: list[dict[str, Any]] = []

    def append(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.appended.append(message)


def test_to_provider_drops_local_keys() -> None:
    msg = {"role": "assistant", "content": "x", "ts": "now", "interrupted": True}
    assert to_provider(msg) == {"role": "assistant", "content": "x"}


def test_repair_fills_missing_results_and_drops_orphans() -> None:
    msgs = [user("a"), calls("1", "2"), result("1"), result("zzz"), reply("b"), result("9")]
    fixed = repair(msgs)
    assert_valid(fixed)
    ids = [m.get("tool_call_id") for m in fixed if m["role"] == "tool"]
    assert ids == ["1", "2"]
    assert fixed[3]["content"] == INTERRUPTED_RESULT


def test_heal_appends_results_for_a_killed_tool_round() -> None:
    session = FakeSession([user("a"), calls("1", "2"), result("1")])
    fixed = heal_orphans(session)
    assert [m["tool_call_id"] for m in session.appended] == ["2"]
    assert_valid(fixed)
    # Healing twice adds nothing.
    heal_orphans(session)
    assert len(session.appended) == 1


def test_heal_leaves_consistent_sessions_alone() -> None:
    session = FakeSession([user("a"), calls("1"), result("1"), reply("done")])
    heal_orphans(session)
    assert session.appended == []

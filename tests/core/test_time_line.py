"""The system prompt holds the date, not the time, so providers' prompt caching holds; the
time reaches the model in a context line on the latest user message as sent (issue 15)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.context import ContextBuilder
from picobot_tui.core.time_line import time_line, with_time_line, without_time_line
from picobot_tui.run.runtime import build_runtime
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

KEY = "sk-test-time-line-0123456789"
T0 = datetime(2026, 3, 4, 10, 0, 30, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def test_two_system_prompts_a_minute_apart_are_byte_identical(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always write tests.")
    clock = Clock(T0)
    builder = ContextBuilder(tmp_path, tool_names=["read_file"], now=clock)
    first = builder.build()
    clock.now = T0 + timedelta(minutes=1)
    second = builder.build()
    assert first.encode() == second.encode()
    assert "2026-03-04 (Wednesday)" in first and "10:0" not in first
    clock.now = T0 + timedelta(days=1)  # the date does change the prompt, once a day
    assert "2026-03-05 (Thursday)" in builder.build()


def test_the_time_line_goes_on_the_last_user_message_only() -> None:
    history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c", "content": "result"},
    ]
    line = time_line(T0)
    assert line == "[current time: 2026-03-04 10:00 UTC (Wednesday)]"
    sent = with_time_line(history, line)
    assert sent[2]["content"] == f"second\n\n{line}"
    assert history[2]["content"] == "second"  # the history keeps the user's words
    assert sent[:2] == history[:2] and sent[3:] == history[3:]
    assert without_time_line(sent[2]["content"]) == "second"
    assert without_time_line("no line [here]") == "no line [here]"


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as s:
        yield s


def _user_contents(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_the_time_reaches_the_model_and_the_prefix_stays(
    server: OpenAITestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "a.txt").write_text("hello")
    settings = Settings(
        providers={"openai": {"api_key": KEY, "api_base": server.url}},
        agents={"defaults": {"workspace": str(tmp_path), "request_timeout": 10}},
    )
    rt = build_runtime(settings, model="openai/test-model")
    clock = Clock(T0)
    rt.loop.context.now = clock
    session = rt.store.open(rt.store.new_key(), model="openai/test-model")
    server.script(
        [
            tool_call_reply("read_file", {"path": "a.txt"}),
            text_reply("It says hello."),
            text_reply("Bye."),
        ]
    )
    first = [e async for e in rt.loop.run_turn(session, "what is in a.txt?")]
    assert first[-1].outcome == "final"
    clock.now = T0 + timedelta(minutes=1)
    second = [e async for e in rt.loop.run_turn(session, "thanks")]
    assert second[-1].outcome == "final"

    bodies = [r.body for r in server.completions]
    assert len(bodies) == 3
    line0 = "[current time: 2026-03-04 10:00 UTC (Wednesday)]"
    line1 = "[current time: 2026-03-04 10:01 UTC (Wednesday)]"
    # Both calls of the first turn send the same message, with the turn's time.
    assert _user_contents(bodies[0]) == [f"what is in a.txt?\n\n{line0}"]
    assert _user_contents(bodies[1]) == [f"what is in a.txt?\n\n{line0}"]
    # The next turn: the time is on its own message; the system prompt, a minute later,
    # is the same bytes (the cached prefix holds).
    assert _user_contents(bodies[2]) == ["what is in a.txt?", f"thanks\n\n{line1}"]
    systems = [json.dumps(b["messages"][0]) for b in bodies]
    assert systems[0] == systems[1] == systems[2]
    assert "10:0" not in systems[0] and "2026-03-04" in systems[0]
    # The session file holds the user's own words.
    lines = [json.loads(line) for line in session.path.read_text().splitlines()]
    stored = [m["content"] for m in lines if m.get("role") == "user"]
    assert stored == ["what is in a.txt?", "thanks"]

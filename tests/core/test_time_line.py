"""The system prompt holds the date, not the time, so providers' prompt caching holds; the
time reaches the model in a context line on each user message as sent (issue 15), made once
and re-sent the same in every later call (issue 24), never in the user's stored words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.context import ContextBuilder
from picobot_tui.core.history import to_provider
from picobot_tui.core.time_line import TIME_KEY, as_sent, time_line, without_time_line
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


def test_a_stored_time_line_is_folded_into_the_message_as_sent() -> None:
    line = time_line(T0)
    assert line == "[current time: 2026-03-04 10:00 UTC (Wednesday)]"
    stored = {"role": "user", "content": "second", TIME_KEY: line, "ts": "x"}
    assert to_provider(stored) == {"role": "user", "content": f"second\n\n{line}"}
    assert stored["content"] == "second"  # the file keeps the user's words
    assert without_time_line(to_provider(stored)["content"]) == "second"
    assert without_time_line("no line [here]") == "no line [here]"
    parts = {"role": "user", "content": [{"type": "text", "text": "hi"}], TIME_KEY: line}
    assert as_sent(parts)["content"][-1] == {"type": "text", "text": line}
    old = {"role": "user", "content": "from an older picobot"}  # no line: sent as it is
    assert to_provider(old) == old
    assert as_sent({"role": "assistant", "content": "a"}) == {"role": "assistant", "content": "a"}


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
    # The next turn re-sends the first message as it was sent, its time line included
    # (dropping the line broke every prefix the turn before wrote), and its own message
    # has its own time; the system prompt, a minute later, is the same bytes.
    assert _user_contents(bodies[2]) == [f"what is in a.txt?\n\n{line0}", f"thanks\n\n{line1}"]
    assert bodies[2]["messages"][: len(bodies[1]["messages"])] == bodies[1]["messages"]
    systems = [json.dumps(b["messages"][0]) for b in bodies]
    assert systems[0] == systems[1] == systems[2]
    assert "10:0" not in systems[0] and "2026-03-04" in systems[0]
    # The session file holds the user's own words.
    lines = [json.loads(line) for line in session.path.read_text().splitlines()]
    stored = [m["content"] for m in lines if m.get("role") == "user"]
    assert stored == ["what is in a.txt?", "thanks"]
    assert [m[TIME_KEY] for m in lines if m.get("role") == "user"] == [line0, line1]

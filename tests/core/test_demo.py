"""The offline demo model drives the real loop: a list_dir call, or exec for `run CMD`."""

from __future__ import annotations

from typing import Any

from picobot_tui.config.settings import load_settings
from picobot_tui.core.approval import ApprovalRequest
from picobot_tui.core.llm.demo import DemoModel
from picobot_tui.run.runtime import build_runtime


async def _turn(message: str, decision: str = "allow") -> tuple[list[Any], Any]:
    asked: list[ApprovalRequest] = []

    async def confirm(req: ApprovalRequest) -> str:
        asked.append(req)
        return decision

    settings = load_settings()[0]
    rt = build_runtime(settings, model="demo", model_client=DemoModel(delay=0), confirm=confirm)
    (settings.workspace_path / "readme.txt").write_text("x")
    session = rt.store.open(rt.store.new_key(), model="demo")
    events = [e async for e in rt.loop.run_turn(session, message)]
    return events, asked


async def test_demo_lists_the_workspace() -> None:
    events, asked = await _turn("hello")
    text = "".join(e.text for e in events if e.type == "text_delta")
    assert "[demo model]" in text
    done = next(e for e in events if e.type == "tool_call_finished")
    assert done.name == "list_dir" and "readme.txt" in done.result
    assert "readme.txt" in events[-1].content and asked == []


async def test_demo_run_asks_before_exec() -> None:
    events, asked = await _turn("run echo demo-ran")
    assert [a.name for a in asked] == ["exec"]
    done = next(e for e in events if e.type == "tool_call_finished")
    assert done.ok and "demo-ran" in done.result
    assert "demo-ran" in events[-1].content


async def test_demo_run_denied() -> None:
    events, _ = await _turn("run touch nope", decision="deny")
    done = next(e for e in events if e.type == "tool_call_finished")
    assert done.status == "denied"
    assert events[-1].outcome == "final"


async def test_demo_counts_the_entries_not_the_header(tmp_path: Any) -> None:
    """A 6-entry listing is "6 entries" (list_dir's header line is no entry)."""
    settings = load_settings()[0]
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    settings.agents.defaults.workspace = str(ws)
    for name in ("a.txt", "b.txt", "c.md", "d.py", "e"):
        (ws / name).write_text("x")
    rt = build_runtime(settings, model="demo", model_client=DemoModel(delay=0))
    session = rt.store.open(rt.store.new_key(), model="demo")
    events = [e async for e in rt.loop.run_turn(session, "what is here?")]
    done = next(e for e in events if e.type == "tool_call_finished")
    assert done.result.startswith("./ (6 entries)")
    answer = events[-1].content
    assert "**6** entries" in answer and "(6 entries)" not in answer
    said = "".join(e.text for e in events if e.type == "text_delta")
    assert "You said: _what is here?_" in said  # the time line is no part of the words


def test_the_demo_types_at_the_configured_pace(picobot_home, monkeypatch) -> None:
    """`demo.wordsPerSecond`: 50 for users (it reads as a provider streaming), 0 at once."""
    from picobot_tui.run.runtime import make_model_client

    monkeypatch.delenv("PICOBOT_DEMO__WORDS_PER_SECOND")
    settings = load_settings()[0]
    assert settings.demo.words_per_second == 50
    model = make_model_client(settings, "demo")
    assert isinstance(model, DemoModel) and model.delay == 0.02
    (picobot_home / "config.json").write_text('{"demo": {"wordsPerSecond": 4}}')
    assert make_model_client(load_settings()[0], "demo").delay == 0.25  # type: ignore[attr-defined]
    monkeypatch.setenv("PICOBOT_DEMO__WORDS_PER_SECOND", "0")  # the suite's own setting
    assert make_model_client(load_settings()[0], "demo").delay == 0  # type: ignore[attr-defined]

"""A resumed session keeps the "interrupted" mark of an interrupted answer (issue 15)."""

from __future__ import annotations

import os

from picobot_tui.widgets.blocks import AssistantMessage, Notice
from rich.console import Group

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.scripted import ScriptedModel, text, tool_call
from tests.tui.app_support import (
    GatedModel,
    make_app,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)


async def test_a_resumed_session_shows_the_interrupted_mark(settings: Settings) -> None:
    model = GatedModel(["partial ", "answer"], then=[text("fresh answer")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await pilot.press("escape")
        await wait_idle(pilot)
        assert session_lines(app)[-1].get("interrupted") is True
        key = app.sessions.key
        await app.sessions.new()
        await wait_for(pilot, lambda: not app.conversation.blocks(), "an empty transcript")
        assert await app.sessions.resume(key)
        await wait_for(pilot, lambda: app.conversation.transcript.query(AssistantMessage))
        await pilot.pause()
        message = app.conversation.transcript.query_one(AssistantMessage)
        assert message.source == "partial answer"
        assert message.interrupted and message.has_class("interrupted")
        drawn = message.render()
        assert isinstance(drawn, Group) and drawn.renderables[-1].plain == "⏹ interrupted"


async def test_a_session_resumed_at_start_shows_the_interrupted_mark(settings: Settings) -> None:
    """`picobot agent --session ID` after an interrupted answer."""
    model = GatedModel(["cut ", "short"])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await pilot.press("escape")
        await wait_idle(pilot)
        key = app.sessions.key
        app.sessions.close()  # a new process would find it unlocked
    again = make_app(settings, session=key)
    async with again.run_test(size=(120, 36)) as pilot:
        await wait_idle(pilot)
        await wait_for(pilot, lambda: again.conversation.transcript.query(AssistantMessage))
        message = again.conversation.transcript.query_one(AssistantMessage)
        assert message.source == "cut short"
        assert message.interrupted and message.has_class("interrupted")


def _interrupted_notices(app) -> list[Notice]:
    return [
        b for b in app.conversation.blocks() if isinstance(b, Notice) and b.kind == "interrupted"
    ]


async def test_a_turn_interrupted_in_a_tool_keeps_its_mark_on_resume(settings: Settings) -> None:
    settings.tools.approval = "auto"
    steps = [
        tool_call("exec", {"command": "sleep 30"}, call_id="slow"),
        text("never"),
    ]
    app = make_app(settings, ScriptedModel(steps))
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "run it")
        await wait_for(pilot, lambda: app.status.state == "running tool")
        await pilot.pause()
        await pilot.press("escape")
        await wait_idle(pilot)
        assert len(_interrupted_notices(app)) == 1  # what the turn showed live
        key = app.sessions.key
        await app.sessions.new()
        await wait_for(pilot, lambda: not app.conversation.blocks(), "an empty transcript")
        assert await app.sessions.resume(key)
        await wait_for(pilot, lambda: app.conversation.tool_block("slow"), "the tool block")
        await pilot.pause()
        blocks = app.conversation.blocks()
        assert [type(b).__name__ for b in blocks] == ["UserMessage", "ToolBlock", "Notice"]
        assert app.conversation.tool_block("slow").status == "cancelled"
        assert len(_interrupted_notices(app)) == 1


def _assistant_texts(model: ScriptedModel) -> list[str]:
    return [
        str(m.get("content") or "")
        for m in model.requests[-1].messages
        if m.get("role") == "assistant"
    ]


async def test_a_turn_interrupted_before_any_text_keeps_its_mark(settings: Settings) -> None:
    """Esc before the first token: the file keeps an empty interrupted marker, the resumed
    transcript shows the mark, and no provider request ever carries the empty message."""
    model = GatedModel([], then=[text("next answer"), text("after resume")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await pilot.press("escape")
        await wait_idle(pilot)
        last = session_lines(app)[-1]
        assert last["role"] == "assistant" and last["content"] == ""
        assert last.get("interrupted") is True
        assert len(_interrupted_notices(app)) == 1
        await type_and_send(pilot, "again")  # the same process: the marker is not sent
        await wait_idle(pilot)
        assert _assistant_texts(model.after) == []
        key = app.sessions.key
        app.sessions.close()
    again = make_app(settings, model, session=key)
    async with again.run_test(size=(120, 36)) as pilot:
        await wait_idle(pilot)
        await wait_for(pilot, lambda: _interrupted_notices(again), "the interrupted mark")
        kinds = [type(b).__name__ for b in again.conversation.blocks()]
        assert kinds[:2] == ["UserMessage", "Notice"]
        await type_and_send(pilot, "once more")  # resumed: repair drops the marker
        await wait_idle(pilot)
        assert _assistant_texts(model.after) == ["next answer"]


def _plain(message: AssistantMessage) -> str:
    from rich.console import Console

    with open(os.devnull, "w") as sink:
        console = Console(width=80, record=True, file=sink)
        console.print(message.render())
    return console.export_text()


async def test_an_answer_cut_inside_an_emphasis_shows_as_markdown(settings: Settings) -> None:
    """Issue 25, point 9: Esc inside `_tell me_` showed "You said: _tell" with the raw mark,
    live and after a resume; the session keeps the text as received."""
    model = GatedModel(["You said: _tell "], then=[text("next")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await pilot.press("escape")
        await wait_idle(pilot)
        live = app.conversation.transcript.query_one(AssistantMessage)
        assert live.interrupted and "You said: tell" in _plain(live)
        assert "_" not in _plain(live)
        assert session_lines(app)[-1]["content"] == "You said: _tell "
        key = app.sessions.key
        await app.sessions.new()
        await wait_for(pilot, lambda: not app.conversation.blocks(), "an empty transcript")
        assert await app.sessions.resume(key)
        await wait_for(pilot, lambda: app.conversation.transcript.query(AssistantMessage))
        await pilot.pause()
        resumed = app.conversation.transcript.query_one(AssistantMessage)
        assert "You said: tell" in _plain(resumed) and "_" not in _plain(resumed)

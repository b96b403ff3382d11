"""Pilot tests of a turn in the TUI: streaming, tool calls, the gauge, errors, the queue, Esc."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.widgets.blocks import AssistantMessage, Notice, ToolBlock, UserMessage
from textual.widgets import Static

from picobot_tui.core.llm.model import LLMError, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel, text, tool_call
from tests.tui.app_support import (
    GatedModel,
    make_app,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)
from tests.tui.compaction_support import answering


async def test_sending_a_message_streams_markdown_then_freezes_it(settings):
    model = GatedModel(["Hello ", "**wor", "ld** and [interrupted] text"])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "hi there")
        await wait_for(pilot, lambda: model.streamed.is_set(), "text streamed")
        await pilot.pause()
        assert app.busy and app.status.state == "thinking"
        user = app.conversation.transcript.query_one(UserMessage)
        assert user.source == "hi there"
        live = app.conversation.transcript.query_one(AssistantMessage)
        assert live.streaming
        assert live.source == "Hello **world** and [interrupted] text"
        await wait_for(pilot, lambda: "world" in live.shown_text)
        model.gate.set()
        await wait_idle(pilot)
        # frozen into one cheap Static; markup-looking text kept literally
        assert not live.streaming
        assert len(live.children) == 0  # the block draws the text itself
        assert "[interrupted]" in live.source
        assert app.prompt.text == ""
    assert session_lines(app)[-1]["content"] == "Hello **world** and [interrupted] text"


async def test_tool_calls_show_in_timeline_and_inline_with_final_status(settings):
    workspace = Path(settings.agents.defaults.workspace)
    (workspace / "notes.txt").write_text("one\ntwo\n")
    steps = [
        tool_call("list_dir", {"path": "."}, call_id="call_ok"),
        tool_call("read_file", {"path": "missing.txt"}, call_id="call_bad"),
        text("Done: I listed the workspace."),
    ]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "look around")
        await wait_idle(pilot)
        ok = app.conversation.tool_block("call_ok")
        bad = app.conversation.tool_block("call_bad")
        assert ok is not None and bad is not None
        assert (ok.status, bad.status) == ("ok", "error")
        assert "notes.txt" in ok.result
        assert not ok.expanded and bad.expanded  # failures are expanded by default
        entries = app.timeline.entries
        assert [(e.name, e.status, e.iteration) for e in entries.values()] == [
            ("list_dir", "ok", 1),
            ("read_file", "error", 2),
        ]
        assert entries["call_ok"].max_iterations == settings.agents.defaults.max_tool_iterations
        assert "iter 2/" in str(app.timeline.border_title)

        # selecting an entry scrolls the conversation to that call and expands it
        timeline = app.timeline.option_list
        timeline.focus()
        timeline.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert ok.expanded
        assert app.focused is ok
        # and the block toggles from the keyboard
        await pilot.press("enter")
        assert not ok.expanded
    roles = [m["role"] for m in session_lines(app)]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


async def test_gauge_follows_usage_and_shows_compression(settings):
    settings.agents.defaults.token_budget = 3000
    long = "word " * 500
    first = [*text(long)[:-1], UsageChunk(1234, 56, cost=0.0123)]
    app = make_app(settings, ScriptedModel([first], default=answering(long)))
    async with app.run_test(size=(120, 36)) as pilot:
        gauge = app.gauge
        assert gauge.budget == 3000 and gauge.prompt_tokens is None
        await type_and_send(pilot, "first " + long)
        await wait_idle(pilot)
        assert (gauge.prompt_tokens, gauge.completion_tokens) == (1234, 56)
        assert gauge.session_cost == 0.0123
        assert "$0.0123" in str(gauge.render())
        assert gauge.threshold == 2400 and gauge.estimated > 0
        assert "compresses" in str(gauge.render())
        for n in range(2):
            await type_and_send(pilot, f"more {n} " + long)
            await wait_idle(pilot)
        assert gauge.compression.startswith("compressed: dropped")
        rendered = str(gauge.render())
        assert "compressed: dropped" in rendered
        notices = [n for n in app.conversation.transcript.query(Notice) if n.kind == "compress"]
        assert notices and "session file keeps them all" in notices[0].text


async def test_unknown_cost_shows_na(settings):
    app = make_app(settings, [text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "hi")
        await wait_idle(pilot)
        assert app.gauge.cost_known and app.gauge.session_cost is None
        assert "cost n/a" in str(app.gauge.render())


async def test_provider_error_is_a_notice_and_the_app_keeps_going(settings):
    error = LLMError(
        "Authentication failed (401)", kind="auth", transient=False, hint="Set OPENAI_API_KEY."
    )
    app = make_app(settings, [[error], text("back again")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "hi")
        await wait_idle(pilot)
        notices = list(app.conversation.transcript.query(Notice))
        assert [n.kind for n in notices] == ["error"]
        assert "Authentication failed" in notices[0].text
        assert notices[0].hint == "Set OPENAI_API_KEY."
        assert app.is_running
        await type_and_send(pilot, "again")
        await wait_idle(pilot)
        assert app.conversation.last_response() == "back again"


async def test_retry_and_stuck_appear_as_notices_and_in_the_timeline(settings):
    settings.agents.defaults.max_retries = 1
    settings.agents.defaults.retry_backoff = 0
    rate = LLMError("Rate limited (429)", kind="rate_limit", transient=True, retry_after=0)
    same = tool_call("list_dir", {"path": "."}, call_id="c1")
    again = tool_call("list_dir", {"path": "."}, call_id="c2")
    app = make_app(settings, [[rate], same, again, text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "go")
        await wait_idle(pilot)
        kinds = [n.kind for n in app.conversation.transcript.query(Notice)]
        assert "retry" in kinds and "stuck" in kinds
        notes = [e.kind for e in app.timeline.entries.values() if e.kind != "call"]
        assert notes == ["retry", "stuck"]


async def test_messages_typed_while_busy_are_queued_visibly_and_sent_next(settings):
    model = GatedModel(["working on it"], then=[text("second answer")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await type_and_send(pilot, "second question")
        await pilot.pause()
        assert app.queue == ["second question"]
        queue = app.prompt.query_one("#queue", Static)
        assert queue.display and "second question" in str(queue.render())
        model.gate.set()
        await wait_for(pilot, lambda: app.conversation.last_response() == "second answer")
        await wait_idle(pilot)
        assert app.queue == [] and not queue.display
    users = [m["content"] for m in session_lines(app) if m["role"] == "user"]
    assert users == ["first", "second question"]


async def test_escape_interrupts_mid_stream_and_keeps_the_session_consistent(settings):
    model = GatedModel(["partial ", "answer"], then=[text("fresh answer")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set())
        await type_and_send(pilot, "queued while streaming")
        await pilot.press("escape")
        await wait_idle(pilot)
        message = app.conversation.transcript.query_one(AssistantMessage)
        assert message.interrupted and message.has_class("interrupted")
        assert message.source == "partial answer"
        assert app.is_running  # interrupting is not quitting
        # the queued message comes back to the prompt for editing instead of being sent
        assert app.queue == [] and app.prompt.text == "queued while streaming"
        lines = session_lines(app)
        assert lines[-1] == {**lines[-1], "role": "assistant", "interrupted": True}
        assert lines[-1]["content"] == "partial answer"
        # the session goes on
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.conversation.last_response() == "fresh answer"


async def test_escape_interrupts_a_running_tool(settings):
    settings.tools.approval = "auto"
    steps = [tool_call("exec", {"command": "sleep 30"}, call_id="slow"), text("never")]
    app = make_app(settings, ScriptedModel(steps))
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "run it")
        await wait_for(pilot, lambda: app.status.state == "running tool")
        await pilot.pause()
        await pilot.press("escape")
        await wait_idle(pilot)
        block = app.conversation.tool_block("slow")
        assert isinstance(block, ToolBlock) and block.status == "cancelled"
        assert app.timeline.entries["slow"].status == "cancelled"
        lines = session_lines(app)
        call = next(m for m in lines if m.get("tool_calls"))
        result = next(m for m in lines if m["role"] == "tool")
        assert result["tool_call_id"] == call["tool_calls"][0]["id"] == "slow"
        assert result["status"] == "cancelled"
        assert not any(m.get("content") == "never" for m in lines)


async def test_bell_rings_when_a_turn_ends_while_unfocused(settings):
    settings.ui.bell = "unfocused"
    model = GatedModel(["one"], then=[text("two")])
    app = make_app(settings, model)
    rings: list[int] = []
    async with app.run_test(size=(120, 36)) as pilot:
        app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
        await type_and_send(pilot, "first")
        await wait_for(pilot, lambda: model.streamed.is_set())
        app.app_focus = False  # the user switched to another window (a key press refocuses)
        model.gate.set()
        await wait_idle(pilot)
        assert rings == [1]
        await type_and_send(pilot, "focused again")
        await wait_idle(pilot)
        assert rings == [1]

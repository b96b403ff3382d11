"""The TUI's side of compaction: the notice opens to show the summary the model wrote, and
a tokenBudget below the fixed cost stops the start like any config error."""

from __future__ import annotations

from picobot_tui.widgets.blocks import SummaryNotice

from picobot_tui.core.llm.scripted import ScriptedModel
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle
from tests.tui.compaction_support import SUMMARY, answering


async def test_summary_notice_opens_to_show_the_summary(settings):
    settings.agents.defaults.token_budget = 3000
    long = "word " * 200
    app = make_app(settings, ScriptedModel([], default=answering(long)))
    async with app.run_test(size=(120, 36)) as pilot:
        for i in range(5):
            await type_and_send(pilot, f"q{i} " + long)
            await wait_idle(pilot)
        notices = list(app.conversation.transcript.query(SummaryNotice))
        assert notices, "no compaction with a summary happened"
        notice = notices[0]
        assert SUMMARY not in str(notice.render()) and "read the summary" in str(notice.render())
        notice.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: notice.expanded, "summary shown")
        assert SUMMARY in str(notice.render())
        assert SUMMARY in notice.copy_text()
        await pilot.press("enter")
        assert not notice.expanded


async def test_budget_below_the_fixed_cost_stops_the_start(settings):
    settings.agents.defaults.token_budget = 1200
    app = make_app(settings, ScriptedModel([]))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.start_error is not None, "start error")
    assert app.start_error.code == 2
    assert "tokenBudget is 1,200" in app.start_error.message
    assert "the minimum is" in app.start_error.message


async def test_a_resumed_session_shows_where_it_was_compacted(settings):
    settings.agents.defaults.token_budget = 3000
    long = "word " * 200
    app = make_app(settings, ScriptedModel([], default=answering(long)))
    async with app.run_test(size=(120, 36)) as pilot:
        for i in range(5):
            await type_and_send(pilot, f"q{i} " + long)
            await wait_idle(pilot)
        key = app.sessions.session.key
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert not list(app.conversation.transcript.query(SummaryNotice))
        await type_and_send(pilot, f"/resume {key.removeprefix('cli:')}")
        await wait_for(pilot, lambda: app.sessions.key == key)
        notices = await wait_for(
            pilot, lambda: list(app.conversation.transcript.query(SummaryNotice)), "notice"
        )
        assert notices[0].summary == SUMMARY
        assert "History compressed here" in notices[0].text

"""A tool call whose arguments nest past every parser's limit, in the TUI (issue 21 point 5):
the live turn, the resumed session and the session browser's preview all show the arguments
as the text the model sent. Before, resuming raised RecursionError out of the transcript's
`json.loads`, and the browser's preview of the session died the same way."""

from __future__ import annotations

from picobot_tui.widgets.blocks import AssistantMessage, ToolBlock
from picobot_tui.widgets.session_preview import tool_call_summary

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.model import ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import text
from tests.tui.app_support import make_app, session_lines, type_and_send, wait_for, wait_idle
from tests.tui.test_session_browser import BrowserApp, preview_text, ready

DEEP_ARGS = '{"path": ' + "[" * 5_000 + "]" * 5_000 + "}"


async def test_deep_arguments_are_shown_raw_live_on_resume_and_in_the_browser(
    settings: Settings,
) -> None:
    steps = [
        [ToolCallChunk(0, "deep", "read_file", DEEP_ARGS), UsageChunk(10, 5)],
        text("the call failed"),
    ]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "read it")
        await wait_idle(pilot)
        [live] = app.conversation.transcript.query(ToolBlock)
        assert live.arguments == DEEP_ARGS and live.status == "error"
        assert any(m.get("role") == "tool" for m in session_lines(app))
        key = app.sessions.key
        app.sessions.close()  # a new process would find it unlocked

    again = make_app(settings, session=key)
    async with again.run_test(size=(120, 36)) as pilot:
        await wait_idle(pilot)
        await wait_for(pilot, lambda: again.conversation.transcript.query(AssistantMessage))
        [resumed] = again.conversation.transcript.query(ToolBlock)
        assert resumed.arguments == DEEP_ARGS
        assert again.conversation.transcript.query_one(AssistantMessage).source == (
            "the call failed"
        )
        store = again.runtime.store if again.runtime is not None else None
        assert store is not None
        again.sessions.close()

    browser = BrowserApp(store)
    async with browser.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, 1)
        shown = preview_text(screen)
    name, args = tool_call_summary(
        {"id": "deep", "function": {"name": "read_file", "arguments": DEEP_ARGS}}
    )
    assert (name, args[:20]) == ("read_file", DEEP_ARGS[:20])
    assert "read_file" in shown and "[[[[[[[[" in shown

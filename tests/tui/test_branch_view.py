"""A new branch's view and gauge agree (issue 25, point 9: "a new branch shows a gauge of the
parent's size with no messages"). A branch holds its parent's messages up to the branch
point: the transcript shows them, the notice says which turns they are, and the gauge is the
estimate of exactly those (the system prompt and tools alone, and said so, when it holds
none)."""

from __future__ import annotations

from picobot_tui.widgets.blocks import AssistantMessage, Notice, UserMessage

from tests.tui.app_support import make_app, wait_for, wait_idle
from tests.tui.test_rewind import choose, open_list, run_two_turns, two_turns
from tests.tui.test_rewind import ws as ws  # noqa: F401  # a fixture


async def _branch_at(pilot, turn: int, prompt: str) -> tuple[int, str]:
    app = pilot.app
    await run_two_turns(pilot)
    parent = app.gauge.estimated
    screen = await open_list(pilot)
    await choose(pilot, screen, turn, "c")
    await wait_for(pilot, lambda: app.prompt.text == prompt, "the message back in the prompt")
    await wait_idle(pilot)
    notice = await wait_for(
        pilot,
        lambda: [b.text for b in app.conversation.blocks() if isinstance(b, Notice)],
        "the rewind notice",
    )
    return parent, notice[-1]


def _shown(app) -> list[tuple[str, str]]:
    kinds = {UserMessage: "user", AssistantMessage: "assistant"}
    return [
        (kinds[type(b)], getattr(b, "source", None) or getattr(b, "text", ""))
        for b in app.conversation.blocks()
        if type(b) in kinds
    ]


async def test_a_branch_shows_the_messages_it_holds_and_their_gauge(settings, ws) -> None:
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        parent, notice = await _branch_at(pilot, 2, "now edit it")
        branch = app.sessions.session
        assert branch is not None and branch.info.forked_at == 2
        assert _shown(app) == [("user", "write a"), ("assistant", "wrote a")]
        assert "holding turn 1 of the original" in notice
        held = app.runtime.loop.budget(branch).estimated_tokens
        assert app.gauge.estimated == held < parent
        assert app.gauge.messages == len(branch.messages) > 0
        assert "compresses in" in str(app.gauge.render())
        assert app.status.budget_summary == app.gauge.summary()


async def test_a_branch_from_before_the_first_message_says_it_holds_none(settings, ws) -> None:
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        parent, notice = await _branch_at(pilot, 1, "write a")
        branch = app.sessions.session
        assert branch is not None and branch.messages == []
        assert _shown(app) == []
        assert "holding no messages yet" in notice
        # What the next call costs with no message: the system prompt and the tools.
        assert app.gauge.estimated == app.runtime.loop.budget(branch).estimated_tokens < parent
        assert "no messages: system prompt and tools" in str(app.gauge.render())
        # The first message of the branch: the gauge counts the turn again.
        app.prompt.text = "write a"
        app.prompt.input.focus()
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.gauge.messages is None
        assert "no messages" not in str(app.gauge.render())

"""Pilot test: after maxConsecutiveFailures failed model calls in a row the TUI stops sending
queued messages, says so, keeps them queued, and the user's next message starts afresh."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from picobot_tui.widgets.blocks import Notice
from textual.widgets import Static

from picobot_tui.core.llm.model import Chunk, LLMError, ModelRequest
from picobot_tui.core.llm.scripted import ScriptedModel, Step, text
from tests.tui.app_support import make_app, session_lines, type_and_send, wait_for, wait_idle

DOWN = LLMError("The provider had a server error (HTTP 503)", kind="server", transient=True)


class FailingGate:
    """The first call waits on a gate, then fails; later calls follow `then`."""

    def __init__(self, then: Sequence[Step]) -> None:
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()
        self.after = ScriptedModel(then)
        self.calls = 0

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        if self.calls == 1:
            self.waiting.set()
            await self.gate.wait()
            raise DOWN
        async for chunk in self.after.stream(request):
            yield chunk


def notices(app) -> list[str]:
    return [n.text for n in app.conversation.transcript.query(Notice)]


async def test_too_many_failures_keeps_the_queue_and_the_next_message_starts_afresh(settings):
    # maxRetries is 0 here: one request per turn; the limit is the default 3.
    model = FailingGate(then=[[DOWN], [DOWN], text("back again"), text("four answered")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "one")
        await wait_for(pilot, lambda: model.waiting.is_set(), "first call waiting")
        for queued in ("two", "three", "four"):
            await type_and_send(pilot, queued)
        await wait_for(pilot, lambda: len(app.queue) == 3, "three queued")
        model.gate.set()
        await wait_for(pilot, lambda: app.runtime.loop.failures.stopped, "stopped")
        await wait_idle(pilot)
        await pilot.pause()
        # "two" and "three" went out and failed too; "four" stays queued, unsent.
        assert model.calls == 3
        assert app.queue == ["four"]
        queue = app.prompt.query_one("#queue", Static)
        assert queue.display and "four" in str(queue.render())
        text_of = "\n".join(notices(app))
        assert "3 model calls in a row failed" in text_of
        assert "1 queued message(s) not sent" in text_of
        users = [m["content"] for m in session_lines(app) if m["role"] == "user"]
        assert users == ["one", "two", "three"]
        # The user's next message resets the count and goes through; the queue follows.
        await type_and_send(pilot, "five")
        await wait_for(pilot, lambda: app.queue == [], "queue sent")
        await wait_for(pilot, lambda: app.conversation.last_response() == "four answered")
        await wait_idle(pilot)
        assert model.calls == 5 and app.runtime.loop.failures.count == 0
    users = [m["content"] for m in session_lines(app) if m["role"] == "user"]
    assert users == ["one", "two", "three", "five", "four"]


async def test_failures_count_across_messages_sent_one_by_one(settings):
    model = ScriptedModel([[DOWN], [DOWN], [DOWN], text("working again")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        for i, message in enumerate(("a", "b", "c"), 1):
            await type_and_send(pilot, message)
            await wait_for(pilot, lambda i=i: len(model.requests) == i, f"call {i}")
            await wait_idle(pilot)
        assert app.runtime.loop.failures.stopped
        assert "3 model calls in a row failed" in "\n".join(notices(app))
        await type_and_send(pilot, "d")
        await wait_for(pilot, lambda: app.conversation.last_response() == "working again")
        await wait_idle(pilot)
        assert app.runtime.loop.failures.count == 0

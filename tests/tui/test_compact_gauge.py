"""`/compact` makes the context smaller, as the gauge shows it (issue 15, item 17: once it made
it bigger, 1,684 -> 2,676 tokens, at the default 128k budget: the summary of a short history
could take up to 2,048 tokens, more than the messages it replaced)."""

from __future__ import annotations

import json

from picobot_tui.core.budget import estimate_messages, estimate_text
from picobot_tui.core.llm.model import ModelRequest, TextChunk, UsageChunk
from picobot_tui.core.llm.scripted import ScriptedModel
from tests.tui.app_support import make_app, session_lines, type_and_send, wait_for, wait_idle
from tests.tui.compaction_support import answering, is_summary_call


def verbose(answer: str) -> object:
    """A model that writes its summaries as long as it is allowed to (max_tokens)."""

    def step(request: ModelRequest) -> list[object]:
        raw = estimate_messages(request.messages) + estimate_text(json.dumps(request.tools))
        out = "detail " * (request.max_tokens or 2048) if is_summary_call(request) else answer
        return [TextChunk(out), UsageChunk(raw, estimate_text(out))]

    return step


async def _compact(pilot) -> tuple[int, int]:
    app = pilot.app
    before = app.gauge.estimated
    await type_and_send(pilot, "/compact")
    await wait_idle(pilot)
    await wait_for(pilot, lambda: app.gauge.estimated != before or app.gauge.compression == "")
    return before, app.gauge.estimated


async def test_compact_of_a_long_history_lowers_the_gauge(settings):
    answer = "answer " * 150
    app = make_app(settings, ScriptedModel([], default=answering(answer)))
    async with app.run_test(size=(120, 36)) as pilot:
        for i in range(8):
            await type_and_send(pilot, f"q{i} " + "word " * 150)
            await wait_idle(pilot)
        before, after = await _compact(pilot)
        assert app.gauge.compression.startswith("compressed")
        assert after < before, (before, after)
        # The gauge shows the loop's own figure for the context it sends next.
        assert after == app.runtime.loop.budget(app.sessions.session).estimated_tokens


async def test_compact_never_raises_the_gauge_even_with_a_wordy_summary(settings):
    """A short history (the reported 1,684 tokens) and a model that fills its summary."""
    app = make_app(settings, ScriptedModel([], default=verbose("fine, noted.")))
    async with app.run_test(size=(120, 36)) as pilot:
        for i in range(3):
            await type_and_send(pilot, f"q{i} " + "word " * 60)
            await wait_idle(pilot)
        before, after = await _compact(pilot)
        assert app.gauge.compression.startswith("compressed")
        assert after < before, (before, after)
        # The summary kept is at most half of what it replaced, whatever the model wrote.
        [record] = [m for m in session_lines(app) if "compaction" in m]
        assert record["compaction"]["strategy"] == "summarize"
        assert "detail detail" in record["content"] and len(record["content"]) < 3 * 60 * 5

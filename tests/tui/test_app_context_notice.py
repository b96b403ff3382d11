"""A context file linking out of the workspace: the TUI says so once, as a ⚠ notice, and the
model never sees the file."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.widgets.blocks import Notice

from picobot_tui.core.llm.scripted import ScriptedModel, text
from tests.tui.app_support import make_app, type_and_send, wait_idle


async def test_a_link_out_is_noticed_once_per_session_and_not_sent(settings, tmp_path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-CONTENT-for-the-tui")
    ws = Path(settings.agents.defaults.workspace)
    (ws / "AGENTS.md").symlink_to(outside)
    model = ScriptedModel([text("one"), text("two")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first")
        await wait_idle(pilot)
        await type_and_send(pilot, "second")
        await wait_idle(pilot)
        notices = list(app.conversation.transcript.query(Notice))
        assert [n.kind for n in notices] == ["stuck"]  # the ⚠ notice, once, not per turn
        assert notices[0].text.startswith("AGENTS.md was left out of the system prompt")
        assert "outside the workspace" in notices[0].text
    assert len(model.requests) == 2
    for request in model.requests:
        assert "OUTSIDE-CONTENT" not in str(request.messages)

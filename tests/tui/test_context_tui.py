"""`/context` in the TUI, through Pilot: after a turn it lists the workspace's instruction
files with their paths, the tools offered, and the conversation's messages, with the same
total as the budget gauge; scrubbed; an untrusted workspace's files are not in it."""

from __future__ import annotations

import re
from pathlib import Path

from picobot_tui.core.llm.scripted import text
from picobot_tui.run.runtime import make_untrusted
from tests.tui.app_support import make_app, make_settings, transcript_text, type_and_send, wait_idle


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("Always run the tests.\n")
    return ws


async def test_context_lists_files_tools_and_the_conversation(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    app = make_app(make_settings(ws), [text("an answer " * 100)])
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        gauge = app.runtime.loop.budget(app.sessions.session)
        await type_and_send(pilot, "/context")
        await pilot.pause()
        shown = transcript_text(app)
    assert str(ws / "AGENTS.md") in shown.replace("\n", "")
    assert re.search(r"read_file +~\d+ +built-in", shown)
    assert re.search(r"2 messages +~\d+", shown)
    assert f"The next call: ~{gauge.estimated_tokens:,} tokens of a {gauge.budget:,} budget" in (
        shown
    )


async def test_an_untrusted_workspace_shows_none_of_its_files(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    app = make_app(make_settings(ws), [])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot)
        assert app.runtime is not None
        make_untrusted(app.runtime)
        await type_and_send(pilot, "/context")
        await pilot.pause()
        shown = transcript_text(app)
    assert "The next call:" in shown and "AGENTS.md" not in shown

"""The status bar says when exec runs without its sandbox (issue 10, point 12)."""

from __future__ import annotations

from picobot_tui.widgets.status_bar import StatusBar
from textual.app import App, ComposeResult

from picobot_tui.core.settings import ExecConfig
from picobot_tui.core.tools.exec.sandbox import exec_sandbox_note, sandbox_status


class _Bar(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


async def test_exec_note_is_shown_and_cleared() -> None:
    app = _Bar()
    async with app.run_test(size=(100, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.model, bar.session = "demo", "cli:x"
        assert "unsandboxed" not in str(bar.render())
        bar.exec_note = "exec unsandboxed"
        await pilot.pause()
        assert "⚠ exec unsandboxed" in str(bar.render())
        bar.exec_note = ""
        assert "unsandboxed" not in str(bar.render())


def test_note_follows_the_sandbox_status(monkeypatch) -> None:
    assert exec_sandbox_note(ExecConfig(sandbox="none")) == "exec unsandboxed"
    if sandbox_status(ExecConfig()).active:
        assert exec_sandbox_note(ExecConfig()) == ""
    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap
    assert exec_sandbox_note(ExecConfig(sandbox="auto")) == "exec unsandboxed"
    assert exec_sandbox_note(ExecConfig(sandbox="bwrap")) == "exec refused: no bwrap"

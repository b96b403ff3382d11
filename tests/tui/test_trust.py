"""The trust question: the TUI opened in a folder it was not told to use (the current
directory) asks once whether to trust it; an untrusted folder's context files stay out of the
prompt and its tools are read-only. A named workspace is never asked about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from picobot_tui.widgets.trust_dialog import TrustScreen

from picobot_tui.core.llm.model import ModelRequest
from picobot_tui.core.llm.scripted import text, tool_call
from tests.tui.app_support import (
    make_app,
    make_settings,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)

MARK = "PROJECT-AGENTS-MARK-7731"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with its own AGENTS.md, as the current directory."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "AGENTS.md").write_text(f"Always say {MARK}.\n")
    monkeypatch.chdir(folder)
    return folder


def implicit_settings():
    """Settings that name no workspace: the app works in the current directory."""
    settings = make_settings(Path("unused"))
    settings.agents.defaults.workspace = None
    settings.tools.approval = "auto"  # only trust decides what may run
    return settings


def writing_model(prompts: list[str]) -> list:
    def first(request: ModelRequest) -> list:
        prompts.append(request.messages[0]["content"])
        return tool_call("write_file", {"path": "made.txt", "content": "hi\n"}, call_id="w1")

    return [first, text("done")]


async def wait_trust(pilot) -> TrustScreen:
    return await wait_for(
        pilot, lambda: isinstance(pilot.app.screen, TrustScreen) and pilot.app.screen, "trust"
    )


def stored(home: Path) -> dict[str, Any]:
    return json.loads((home / "trusted.json").read_text())["workspaces"]


async def test_trust_loads_the_context_and_lets_the_tools_write(project, picobot_home):
    prompts: list[str] = []
    app = make_app(implicit_settings(), writing_model(prompts))
    async with app.run_test(size=(120, 36)) as pilot:
        modal = await wait_trust(pilot)
        assert modal.folder == project.resolve()
        assert not app.ready  # nothing runs before the answer
        await pilot.press("y")
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "write it")
        await wait_idle(pilot)
        assert MARK in prompts[0]
        assert (project / "made.txt").read_text() == "hi\n"
        assert app.conversation.tool_block("w1").status == "ok"
    assert stored(picobot_home) == {str(project.resolve()): True}
    assert (picobot_home / "trusted.json").stat().st_mode & 0o777 == 0o600


async def test_no_trust_leaves_the_context_out_and_the_tools_read_only(project, picobot_home):
    prompts: list[str] = []
    app = make_app(implicit_settings(), writing_model(prompts))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_trust(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.ready, "app ready")
        await type_and_send(pilot, "write it")
        await wait_idle(pilot)
        assert MARK not in prompts[0] and "not trusted" in prompts[0]
        assert not (project / "made.txt").exists()
        assert app.conversation.tool_block("w1").status == "denied"
        assert app.status.read_only and "read-only" in str(app.status.render())
    result = next(m for m in session_lines(app) if m["role"] == "tool")
    assert result["status"] == "denied" and "not trusted" in result["content"]
    assert stored(picobot_home) == {str(project.resolve()): False}


async def test_enter_at_the_question_answers_read_only(project, picobot_home):
    """Round three: Enter pressed the focused "Trust" button, so an Enter meant for the
    prompt (the first message, sent as the question came up) trusted a hostile folder."""
    app = make_app(implicit_settings(), [text("hi")])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_trust(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.ready, "app ready")
    assert stored(picobot_home) == {str(project.resolve()): False}


async def test_the_answer_is_kept_and_not_asked_again(project, picobot_home):
    app = make_app(implicit_settings(), [text("hi")])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_trust(pilot)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.ready, "app ready")
    prompts: list[str] = []
    again = make_app(implicit_settings(), writing_model(prompts))
    async with again.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: again.ready, "app ready")
        assert not isinstance(again.screen, TrustScreen)
        await type_and_send(pilot, "write it")
        await wait_idle(pilot)
        assert MARK not in prompts[0]  # still untrusted: the stored answer holds
        assert not (project / "made.txt").exists()


async def test_a_workspace_named_with_the_option_is_not_asked_about(
    project, picobot_home, tmp_path
):
    named = tmp_path / "named"
    named.mkdir()
    (named / "AGENTS.md").write_text(f"{MARK}\n")
    prompts: list[str] = []
    app = make_app(implicit_settings(), writing_model(prompts), workspace=named)  # --workspace
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "app ready")
        assert not isinstance(app.screen, TrustScreen)
        await type_and_send(pilot, "write it")
        await wait_idle(pilot)
        assert MARK in prompts[0] and (named / "made.txt").exists()
    assert not (picobot_home / "trusted.json").exists()

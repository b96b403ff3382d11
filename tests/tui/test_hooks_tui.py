"""Hooks in the TUI, through Pilot: a PreToolUse hook's block is never put to the user (no
approval dialog under `ask`), the call shows as denied with the hook's reason, a failing
hook shows as an error, and `/hooks` lists what runs and where it comes from."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.widgets.approval import ApprovalScreen

from picobot_tui.core.hooks.config import HooksConfig
from picobot_tui.core.llm.scripted import text, tool_call
from tests.tui.app_support import make_app, make_settings, transcript_text, type_and_send, wait_idle


async def test_a_blocked_call_is_never_asked_about_and_hooks_lists_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = make_settings(ws)
    settings.tools.approval = "ask"
    settings.hooks = HooksConfig.model_validate(
        {
            "pre_tool_use": [
                {"matcher": "write_file", "hooks": [{"command": "echo 'not here' >&2; exit 2"}]},
                {"matcher": "exec", "hooks": [{"command": "exit 1"}]},
            ]
        }
    )
    write = tool_call("write_file", {"path": "x.txt", "content": "x"}, call_id="w1")
    run = tool_call("exec", {"command": "touch y"}, call_id="e1")
    app = make_app(settings, [write, run, text("ok")])
    asked: list[object] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "go")
        while app.busy or app.status.state != "idle":
            if isinstance(app.screen, ApprovalScreen):
                asked.append(app.screen)
                break
            await pilot.pause(0.01)
        await wait_idle(pilot)
        statuses = {k: e.status for k, e in app.timeline.entries.items() if e.kind == "call"}
        shown = transcript_text(app)
        block = app.conversation.tool_block("w1")
        assert block is not None
        result = block.result
        await type_and_send(pilot, "/hooks")
        await pilot.pause()
        listed = transcript_text(app)
    assert asked == []
    assert statuses == {"w1": "denied", "e1": "denied"}
    assert result == "Blocked by a hook: not here"
    assert "PreToolUse hook `exit 1` exited 1; the call is blocked" in shown
    assert not (ws / "x.txt").exists() and not (ws / "y").exists()
    assert "2 hook(s) run in this session" in listed
    assert "PreToolUse write_file: echo 'not here' >&2; exit 2 (user, 60 s)" in listed

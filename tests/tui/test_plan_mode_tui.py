"""Plan mode in the TUI, through Pilot: `--plan` shows in the status bar and on the prompt
from the start; 100 scripted calls that would change something, mixed with reads and a real
MCP server's tools, under
tools.approval `auto`: none runs (each shows as "plan" in the timeline), every read does, the
workspace and the shadow git are byte-identical; the plan's choice dialog then carries it
out (plan mode ends, "go ahead" is sent, the next write runs). Shift+Tab and /plan switch the
mode; discard records a note for the model; "save to TODO.md" adds the plan's steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from picobot_tui.widgets.plan_choice import PlanChoice

from picobot_tui.core import plan_mode
from picobot_tui.core.llm.model import ToolCallChunk, UsageChunk
from picobot_tui.core.llm.scripted import text, tool_call
from picobot_tui.run.options import RunOptions
from tests.support import plan_fuzz
from tests.tui.app_support import (
    make_app,
    make_settings,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)
from tests.tui.test_mcp_tui import test_server as mcp_test_server

MUTATING = 100


def steps(planned: list[plan_fuzz.ToolCall], per_reply: int = 10) -> list[list[object]]:
    out: list[list[object]] = []
    for i in range(0, len(planned), per_reply):
        batch = planned[i : i + per_reply]
        chunks: list[object] = [
            ToolCallChunk(k, c.id, c.name, json.dumps(c.args)) for k, c in enumerate(batch)
        ]
        out.append([*chunks, UsageChunk(10, 5)])
    return out


def _settings(ws: Path):  # type: ignore[no-untyped-def]
    settings = make_settings(ws)
    settings.tools.approval = "auto"
    settings.agents.defaults.max_tool_iterations = 100
    return settings


async def test_plan_mode_runs_no_changing_call_and_carries_the_plan_out(tmp_path: Path) -> None:
    ws = plan_fuzz.workspace(tmp_path / "ws")
    settings = _settings(ws)
    marker = tmp_path / "mcp"
    settings.tools.mcp_servers = {"t": mcp_test_server(marker)}  # a real one, over stdio
    checkpoints = settings.home / "data" / "checkpoints"
    planned = plan_fuzz.calls(11, MUTATING, mcp=True)
    go = tool_call("write_file", {"path": "done.txt", "content": "ok\n"}, call_id="go1")
    first = tool_call("write_file", {"path": "before.txt", "content": "x\n"}, call_id="b1")
    script = [first, text("written"), *steps(planned), text(plan_fuzz.PLAN), go, text("done")]
    app = make_app(settings, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready, "ready")
        await type_and_send(pilot, "write before.txt")  # so the shadow git holds a change
        await wait_idle(pilot)
        assert any(p.is_file() for p in checkpoints.rglob("*"))
        app.action_plan()
        assert app.status.mode == "plan"
        assert "plan mode" in str(app.prompt.border_title)
        before = plan_fuzz.state(ws, checkpoints)
        await type_and_send(pilot, "plan it")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanChoice), "the plan's choice")
        shown = {c.id: app.timeline.entries[c.id].status for c in planned}
        assert plan_fuzz.state(ws, checkpoints) == before
        results = [m for m in session_lines(app) if m.get("role") == "tool"]
        await pilot.press("g")
        await wait_idle(pilot)
        assert app.status.mode == ""
        assert app.runtime is not None and not app.runtime.tools.ctx.plan
        users = [m["content"] for m in session_lines(app) if m.get("role") == "user"]
    assert [c for c in planned if shown[c.id] == "ok"] == [
        c for c in planned if plan_fuzz.is_read(c)
    ]
    assert all(shown[c.id] == "plan" for c in planned if not plan_fuzz.is_read(c))
    refused = [r["content"] for r in results if r["status"] == "denied"]
    assert len(refused) == sum(not plan_fuzz.is_read(c) for c in planned)
    assert all(plan_mode.is_refusal(r) for r in refused)
    assert users == ["write before.txt", "plan it", plan_mode.GO_AHEAD]
    assert not (marker / "call-echo").exists() and (marker / "call-peek").exists()
    assert (ws / "done.txt").read_text() == "ok\n"


@pytest.mark.parametrize("how", ["shift+tab", "/plan"])
async def test_shift_tab_and_slash_plan_switch_the_mode(tmp_path: Path, how: str) -> None:
    ws = plan_fuzz.workspace(tmp_path / "ws")
    write = tool_call("write_file", {"path": "a.txt", "content": "x\n"}, call_id="w1")
    app = make_app(_settings(ws), [write, text("plan: write a.txt")])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready, "ready")
        assert app.status.mode == ""

        async def switch() -> None:
            if how == "shift+tab":
                app.prompt.input.focus()
                await pilot.press("shift+tab")
            else:
                await type_and_send(pilot, "/plan")
            await pilot.pause()

        await switch()
        assert app.status.mode == "plan" and app.prompt.has_class("-plan")
        await type_and_send(pilot, "plan")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanChoice), "the plan's choice")
        await pilot.press("escape")  # keep planning
        await pilot.pause()
        assert app.status.mode == "plan"
        await switch()
        assert app.status.mode == "" and not app.prompt.has_class("-plan")
    assert (ws / "a.txt").read_text() == plan_fuzz.FILES["a.txt"]


async def test_discard_records_a_note_and_todo_saves_the_steps(tmp_path: Path) -> None:
    ws = plan_fuzz.workspace(tmp_path / "ws")
    app = make_app(
        _settings(ws), [text(plan_fuzz.PLAN), text(plan_fuzz.PLAN)], options=RunOptions(plan=True)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.ready, "ready")
        assert app.status.mode == "plan" and app.prompt.has_class("-plan")  # `--plan`
        await type_and_send(pilot, "plan")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanChoice), "the first choice")
        await pilot.press("d")
        await wait_idle(pilot)
        await type_and_send(pilot, "again")
        await wait_for(pilot, lambda: isinstance(app.screen, PlanChoice), "the second choice")
        await pilot.press("t")
        await wait_for(pilot, lambda: "Run the tests" in (ws / "TODO.md").read_text(), "TODO.md")
        lines = session_lines(app)
    notes = [m["content"] for m in lines if m.get("role") == "system"]
    assert plan_mode.DISCARDED in notes
    assert (ws / "TODO.md").read_text() == (
        "- [ ] first\n- [ ] Read a.txt\n- [ ] Change alpha to omega\n- [ ] Run the tests\n"
    )

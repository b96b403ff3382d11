"""An untrusted workspace (ToolContext.read_only): the approval policy refuses every file
change, command and todo write, whatever tools.approval or alwaysAllow say; reads still run."""

from __future__ import annotations

from pathlib import Path

import pytest

from picobot_tui.config.settings import Settings
from picobot_tui.core.approval import approval_needed
from picobot_tui.core.events import ToolCallFinished
from picobot_tui.core.llm import scripted
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.core.turn_state import SessionState
from picobot_tui.run.runtime import build_runtime, make_untrusted


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    return ws


@pytest.fixture
def runtime(workspace: Path):
    settings = Settings()
    settings.agents.defaults.workspace = str(workspace)
    settings.tools.approval = "auto"
    settings.tools.always_allow = ["exec", "write_file"]
    steps = [
        scripted.tool_call("write_file", {"path": "w.txt", "content": "x"}, call_id="w"),
        scripted.tool_call("exec", {"command": "touch e.txt"}, call_id="e"),
        scripted.tool_call("todo", {"action": "add", "text": "t"}, call_id="t"),
        scripted.tool_call("list_dir", {"path": "."}, call_id="l"),
        scripted.text("done"),
    ]
    rt = build_runtime(settings, model="scripted", model_client=ScriptedModel(steps))
    make_untrusted(rt)
    return rt


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "a", "content": "x"}),
        ("edit_file", {"path": "a", "old_text": "x", "new_text": "y"}),
        ("exec", {"command": "ls"}),
        ("todo", {"action": "add", "text": "t"}),
    ],
)
def test_every_change_is_untrusted_by_policy(runtime, name, args) -> None:
    verdict = approval_needed(runtime.settings, runtime.tools, "c", name, args, SessionState([]))
    assert verdict == "untrusted"


async def test_the_loop_refuses_changes_with_the_reason_and_still_reads(runtime, workspace):
    with runtime.store.open("cli:untrusted", create=True) as session:
        events = [e async for e in runtime.loop.run_turn(session, "go")]
    done = {e.id: e for e in events if isinstance(e, ToolCallFinished)}
    for call in ("w", "e", "t"):
        assert done[call].status == "denied"
        assert "not trusted" in done[call].result and "read-only" in done[call].result
    assert done["l"].status == "ok"
    assert list(workspace.iterdir()) == []  # nothing was written

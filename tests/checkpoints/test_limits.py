"""Limits: maxFiles (exec not checkpointed, told once), maxFileBytes (not undoable, the
preview says so), maxBytes (oldest sessions pruned), and `enabled: false`."""

from __future__ import annotations

import asyncio
import os
import time

from picobot_tui.core.approval import approval_needed
from picobot_tui.core.checkpoints.limits import enforce, usage
from picobot_tui.core.checkpoints.restore import plan_restore
from picobot_tui.core.checkpoints.store import FRESH
from picobot_tui.core.events import ApprovalRequested
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.tool_step import _say_not_undoable
from picobot_tui.core.turn_state import SessionState
from tests.checkpoints.conftest import Agent


def test_too_many_files_is_not_checkpointed_and_said_once(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(30):
        (ws / f"f{i}").write_text("x")
    settings = CoreSettings()
    settings.checkpoints.max_files = 10
    agent = Agent(ws, settings)
    agent.call(1, "exec", command="echo a > f1")
    agent.call(1, "exec", command="echo b > f2")
    assert len(agent.notes) == 1 and "over checkpoints.maxFiles" in agent.notes[0]
    timeline = agent.timeline()
    assert timeline.changes == [] and [u.call for u in timeline.uncheckpointed] == [
        "call_1",
        "call_2",
    ]
    assert len(plan_restore(agent.store, timeline, 1).uncheckpointed) == 2


def test_a_workspace_that_grows_past_max_files_stops_being_checkpointed(tmp_path):
    # Under the cap at first; an exec that adds files takes the shadow index past it (the
    # count after `git add`, which a split index does not keep in its header).
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(6):
        (ws / f"f{i}").write_text("x")
    settings = CoreSettings()
    settings.checkpoints.max_files = 10
    agent = Agent(ws, settings)
    agent.call(1, "exec", command="echo a > f1")
    assert agent.notes == [] and len(agent.timeline().changes) == 1
    agent.call(1, "exec", command="for i in 1 2 3 4 5 6; do echo n > new$i; done")
    assert len(agent.notes) == 1 and "holds 12 files" in agent.notes[0]
    # The exec that shrinks it starts over the cap (not checkpointed); the next one is.
    agent.call(1, "exec", command="rm new1 new2 new3 new4 new5")
    agent.call(1, "exec", command="echo c > f2")
    timeline = agent.timeline()
    assert [u.call for u in timeline.uncheckpointed] == ["call_2", "call_3"]
    assert [(c.call, c.path.name) for c in timeline.changes] == [
        ("call_1", "f1"),
        ("call_4", "f2"),
    ]


def test_a_file_over_max_file_bytes_is_not_undoable_and_the_preview_says_so(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("a" * 2000 + "\nEND\n")
    settings = CoreSettings()
    settings.checkpoints.max_file_bytes = 1000
    agent = Agent(ws, settings)
    args = {"path": "big.txt", "old_text": "END", "new_text": "end"}
    verdict = approval_needed(settings, agent.registry, "c1", "edit_file", args, SessionState([]))
    assert isinstance(verdict, ApprovalRequested)
    shown = _say_not_undoable(verdict, settings, agent.registry, "edit_file", args)
    assert shown.preview.startswith("not undoable: big.txt is 2,005 bytes")
    agent.call(1, "edit_file", **args)
    plan = plan_restore(agent.store, agent.timeline(), 1)
    assert [f.shown for f in plan.not_undoable] == ["big.txt"]


def test_max_bytes_prunes_the_oldest_sessions_first(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    old = Agent(ws, key="cli:00000001-20260101-000000")
    old.call(1, "write_file", path="a.txt", content="o" * 50_000)
    new = Agent(ws, key="cli:00000002-20260101-000000")
    new.call(1, "write_file", path="b.txt", content="n" * 50_000)
    store = new.store
    assert usage(store) > 100_000
    _age(store.blobs)  # a blob is swept only a while after its last use (FRESH)
    pruned = enforce(store, 80_000)
    assert pruned == ["cli:00000001-20260101-000000"]
    assert store.session_keys() == ["cli:00000002-20260101-000000"]
    assert usage(store) <= 80_000


def _age(folder) -> None:
    past = time.time() - 2 * FRESH
    for path in folder.rglob("*"):
        os.utime(path, (past, past))


def test_disabled_records_nothing(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = CoreSettings()
    settings.checkpoints.enabled = False
    agent = Agent(ws, settings)
    agent.call(1, "write_file", path="a.txt", content="x")
    agent.call(1, "exec", command="echo y > b.txt")
    assert not agent.store.root.exists()
    asyncio.run(asyncio.sleep(0))

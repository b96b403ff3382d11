"""`/diff`, the timeline's `+a −b` and the approval modal's diff (issue 14), in a real git
workspace with real files, the scripted model driving the turns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from picobot_tui.widgets.approval import ApprovalScreen
from picobot_tui.widgets.diff_pane import DiffView
from picobot_tui.widgets.diff_review import DiffReviewScreen, FileDiff
from picobot_tui.widgets.rewind_dialog import ConflictScreen
from textual.widgets import Static

from picobot_tui.core.llm.scripted import text, tool_call
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle
from tests.tui.test_rewind import git_state, repo, run_two_turns, two_turns

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def ws(settings) -> Path:
    settings.tools.approval = "auto"
    workspace = Path(settings.agents.defaults.workspace)
    repo(workspace)
    return workspace


async def open_review(pilot, command: str) -> DiffReviewScreen:
    app = pilot.app
    await type_and_send(pilot, command)
    screen = await wait_for(
        pilot, lambda: isinstance(app.screen, DiffReviewScreen) and app.screen, "the diff"
    )
    await wait_for(pilot, lambda: screen.query(FileDiff) or screen.query("#diff-empty"), "rows")
    return screen


def rows(screen: DiffReviewScreen) -> list[str]:
    return [row.item.title for row in screen.query(FileDiff)]


async def focus_row(pilot, screen: DiffReviewScreen, shown: str) -> None:
    row = next(r for r in screen.query(FileDiff) if r.item.shown == shown)
    row.query_one("CollapsibleTitle").focus()
    await pilot.pause()


@needs_git
async def test_diff_of_the_turn_and_the_session_and_revert_one_file(settings, ws):
    before_git = git_state(ws)
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        screen = await open_review(pilot, "/diff")
        assert screen.title_text == "Changes of turn 2"
        assert rows(screen) == ["a.txt  +1 −1", "b.txt  +2 −0"]
        await pilot.press("s")  # the whole session
        await wait_for(pilot, lambda: screen.title_text == "Changes of this session", "scope")
        await wait_for(pilot, lambda: rows(screen) == ["a.txt  +1 −0", "b.txt  +2 −0"], "rows")
        # Enter opens a file's diff.
        await focus_row(pilot, screen, "a.txt")
        await pilot.press("enter")
        row = next(r for r in screen.query(FileDiff) if r.item.shown == "a.txt")
        await wait_for(pilot, lambda: not row.collapsed, "expanded")
        assert "+two" in row.query_one(DiffView).text
        # r reverts that one file: a.txt was created in the session, so it goes away.
        await pilot.press("r")
        await wait_for(pilot, lambda: not (ws / "a.txt").exists(), "a.txt reverted")
        await wait_for(pilot, lambda: rows(screen) == ["b.txt  +2 −0"], "a.txt left the list")
        assert (ws / "b.txt").read_text() == "bee\nbee\n"
        assert git_state(ws) == before_git
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main_screen, "closed")


@needs_git
async def test_revert_asks_when_the_user_edited_the_file_after(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        (ws / "b.txt").write_text("my own b\n")
        screen = await open_review(pilot, "/diff")
        await focus_row(pilot, screen, "b.txt")
        await pilot.press("r")
        question = await wait_for(
            pilot, lambda: isinstance(app.screen, ConflictScreen) and app.screen, "asked"
        )
        assert question.files == ["b.txt"]
        await pilot.press("escape")  # cancel: the user's edit stays
        await wait_for(pilot, lambda: app.screen is screen, "back to the diff")
        assert (ws / "b.txt").read_text() == "my own b\n"
        await focus_row(pilot, screen, "b.txt")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen), "asked again")
        await pilot.press("o")
        await wait_for(pilot, lambda: not (ws / "b.txt").exists(), "overwritten as asked")


@needs_git
async def test_timeline_shows_counts_and_enter_opens_the_calls_diff_exec_included(settings, ws):
    settings.tools.exec.sandbox = "none"
    steps = [
        tool_call("write_file", {"path": "m.py", "content": "x = 1\ny = 2\n"}, call_id="w1"),
        tool_call("exec", {"command": "printf 'made\\n' > made.txt"}, call_id="x1"),
        tool_call("exec", {"command": "true"}, call_id="x2"),
        text("done"),
    ]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "go")
        await wait_idle(pilot)
        assert (ws / "made.txt").read_text() == "made\n"
        timeline = app.timeline
        await wait_for(pilot, lambda: timeline.entries["x1"].extra.get("changes"), "counts")
        await wait_for(pilot, lambda: timeline.entries["w1"].extra.get("changes"), "counts")
        assert timeline.entries["w1"].extra["changes"] == (2, 0)
        assert timeline.entries["x1"].extra["changes"] == (1, 0)
        assert "changes" not in timeline.entries["x2"].extra  # changed nothing
        prompt = str(timeline.option_list.get_option("x1").prompt)
        assert "+1 −0" in prompt
        # Enter on the exec entry: its diff (from the shadow snapshots).
        options = timeline.option_list
        options.focus()
        options.highlighted = options.get_option_index("x1")
        await pilot.press("enter")
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, DiffReviewScreen) and app.screen, "call diff"
        )
        await wait_for(pilot, lambda: rows(screen) == ["made.txt  +1 −0"], "its file")
        assert not screen.scoped


@pytest.mark.parametrize(("size", "split"), [((140, 40), True), ((80, 30), False)])
async def test_modal_diff_side_by_side_when_wide_unified_when_narrow(settings, size, split):
    workspace = Path(settings.agents.defaults.workspace)
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    edit = {"path": "m.py", "old_text": "return 1", "new_text": "return 2"}
    app = make_app(settings, [tool_call("edit_file", edit, call_id="e1"), text("ok")])
    async with app.run_test(size=size) as pilot:
        await type_and_send(pilot, "edit")
        modal = await wait_for(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen, "modal"
        )
        view = modal.query_one("#approval-preview-body", DiffView)
        await wait_for(pilot, lambda: view._width > 0, "laid out")
        assert view.split is split
        assert view.path == "m.py"
        assert not modal.query("#approval-not-undoable")
        await pilot.press("n")
        await wait_idle(pilot)
        assert (workspace / "m.py").read_text() == "def f():\n    return 1\n"


async def test_modal_says_not_undoable_before_the_user_allows(settings):
    settings.checkpoints.max_file_bytes = 64
    workspace = Path(settings.agents.defaults.workspace)
    (workspace / "big.txt").write_text("line\n" * 40)  # 200 bytes, over the limit
    args = {"path": "big.txt", "content": "small\n"}
    app = make_app(settings, [tool_call("write_file", args, call_id="w1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "shrink it")
        modal = await wait_for(
            pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen, "modal"
        )
        line = modal.query_one("#approval-not-undoable", Static)
        assert "not undoable" in str(line.render())
        assert "checkpoints.maxFileBytes" in modal.not_undoable
        await pilot.press("n")
        await wait_idle(pilot)
        assert (workspace / "big.txt").read_text() == "line\n" * 40


async def test_diff_with_no_session_yet_says_so(settings):
    app = make_app(settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.ready, "ready")
        await type_and_send(pilot, "/diff")
        await pilot.pause()
        assert app.screen is app.main_screen


@needs_git
async def test_an_exec_that_could_not_be_checkpointed_is_marked(settings, ws):
    from picobot_tui.widgets.rewind_dialog import RewindScreen

    settings.tools.exec.sandbox = "none"
    settings.checkpoints.max_files = 1  # the workspace holds more: no snapshot
    steps = [tool_call("exec", {"command": "printf 'x\\n' > out.txt"}, call_id="x1"), text("ok")]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "run it")
        await wait_idle(pilot)
        timeline = app.timeline
        await wait_for(pilot, lambda: timeline.entries["x1"].extra.get("not_checkpointed"), "mark")
        assert "not checkpointed" in str(timeline.option_list.get_option("x1").prompt)
        await app.run_action("rewind")
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, RewindScreen) and app.screen, "the list"
        )
        assert screen.turns[0].changes == "some commands not checkpointed"


@needs_git
async def test_a_resumed_session_shows_what_its_calls_changed(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        key = app.sessions.key
    app.sessions_close()  # what run_app does on exit: the session's lock is released
    resumed = make_app(settings, session=key)
    async with resumed.run_test(size=(120, 36)) as pilot:
        timeline = resumed.timeline
        await wait_for(pilot, lambda: timeline.entries.get("w2"), "the history's calls")
        await wait_for(pilot, lambda: timeline.entries["w2"].extra.get("changes"), "counts")
        assert timeline.entries["w1"].extra["changes"] == (1, 0)
        assert timeline.entries["e1"].extra["changes"] == (1, 1)
        assert timeline.entries["w2"].extra["changes"] == (2, 0)
        assert not [n for n in resumed._notifications if "Still starting" in n.message]


async def test_with_checkpoints_off_rewind_and_diff_say_so(settings):
    settings.checkpoints.enabled = False
    settings.tools.approval = "auto"
    steps = [tool_call("write_file", {"path": "a.txt", "content": "x\n"}), text("ok")]
    app = make_app(settings, steps)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        await wait_idle(pilot)
        for command in ("/rewind", "/diff"):
            await type_and_send(pilot, command)
            await pilot.pause()
            assert app.screen is app.main_screen
        said = [n.message for n in app._notifications]
        assert sum("checkpoints.enabled: false" in m for m in said) == 2

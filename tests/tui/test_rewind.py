"""`/rewind` in the TUI (issue 14): Esc Esc and the palette entry list the user messages with
what each turn changed; restoring code and conversation (a branch, the message back in the
prompt), conversation only, code only (a note for the model); a file the user edited after
the agent asks first. A real git workspace (the user's .git compared byte for byte), real
files, the scripted model driving the turns."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from picobot_tui.widgets.rewind_dialog import ConflictScreen, RewindScreen
from textual.widgets import OptionList

from picobot_tui.core.llm.scripted import text, tool_call
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="needs git",
)


def git(ws: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(ws.parent),
    }
    out = subprocess.run(["git", *args], cwd=ws, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def git_state(ws: Path) -> str:
    """A hash of the user's HEAD, index and refs (and every other file of .git)."""
    h = hashlib.sha256()
    for p in sorted((ws / ".git").rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(ws)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def repo(ws: Path) -> None:
    """A git repository with a commit, an uncommitted change and a staged file."""
    git(ws, "init", "-q")
    (ws / "kept.txt").write_text("committed\n")
    git(ws, "add", "kept.txt")
    git(ws, "commit", "-q", "-m", "init")
    (ws / "kept.txt").write_text("committed\nuser's uncommitted line\n")
    (ws / "staged.txt").write_text("staged\n")
    git(ws, "add", "staged.txt")


def two_turns() -> list:
    """Turn 1 writes a.txt; turn 2 edits it and creates b.txt."""
    return [
        tool_call("write_file", {"path": "a.txt", "content": "one\n"}, call_id="w1"),
        text("wrote a"),
        tool_call(
            "edit_file", {"path": "a.txt", "old_text": "one", "new_text": "two"}, call_id="e1"
        ),
        tool_call("write_file", {"path": "b.txt", "content": "bee\nbee\n"}, call_id="w2"),
        text("edited"),
    ]


@pytest.fixture
def ws(settings) -> Path:
    settings.tools.approval = "auto"
    workspace = Path(settings.agents.defaults.workspace)
    repo(workspace)
    return workspace


async def run_two_turns(pilot) -> None:
    await type_and_send(pilot, "write a")
    await wait_idle(pilot)
    await type_and_send(pilot, "now edit it")
    await wait_idle(pilot)


async def open_list(pilot) -> RewindScreen:
    app = pilot.app
    app.prompt.input.focus()
    await pilot.press("escape", "escape")
    return await wait_for(
        pilot, lambda: isinstance(app.screen, RewindScreen) and app.screen, "the rewind list"
    )


async def choose(pilot, screen: RewindScreen, turn: int, key: str) -> None:
    await wait_for(pilot, lambda: screen.query("#rewind-turns").first().has_focus, "the list")
    turns = screen.query_one("#rewind-turns", OptionList)
    turns.highlighted = turn - 1
    await pilot.pause()
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.chosen is not None, "the three choices")
    await pilot.press(key)


def messages(path: Path) -> list[dict]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if x.get("_type") != "meta"]


async def test_esc_esc_lists_turns_and_restores_code_and_conversation(settings, ws):
    before_git = git_state(ws)
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        assert (ws / "a.txt").read_text() == "two\n"
        original = app.sessions.session
        assert original is not None
        original_key, original_path = original.key, original.path
        original_lines = original_path.read_bytes()
        screen = await open_list(pilot)
        assert [(t.turn, t.text, t.changes) for t in screen.turns] == [
            (1, "write a", "1 file, +1 −0"),
            (2, "now edit it", "2 files, +3 −1"),
        ]
        await choose(pilot, screen, 2, "b")
        await wait_for(pilot, lambda: app.prompt.text == "now edit it", "the message to edit")
        await wait_idle(pilot)
        # Files exactly as before turn 2: a.txt as turn 1 left it, b.txt gone.
        assert (ws / "a.txt").read_bytes() == b"one\n"
        assert not (ws / "b.txt").exists()
        # The user's own files and .git untouched.
        assert (ws / "kept.txt").read_text() == "committed\nuser's uncommitted line\n"
        assert (ws / "staged.txt").read_text() == "staged\n"
        assert git_state(ws) == before_git
        # The branch: parent/forked_at, turn 1 only, the message back in the prompt.
        branch = app.sessions.session
        assert branch is not None
        assert branch.info.parent == original_key and branch.info.forked_at == 2
        assert [m["content"] for m in messages(branch.path) if m["role"] == "user"] == ["write a"]
        assert app.prompt.text == "now edit it"
        # The original is complete, byte for byte.
        assert original_path.read_bytes() == original_lines


async def test_conversation_only_leaves_the_files(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        original_key = app.sessions.key
        await app.run_action("rewind")  # the palette entry's action
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, RewindScreen) and app.screen, "the list"
        )
        await choose(pilot, screen, 1, "c")
        await wait_for(pilot, lambda: app.prompt.text == "write a", "the message to edit")
        assert app.sessions.key != original_key
        assert (ws / "a.txt").read_text() == "two\n"
        assert (ws / "b.txt").read_text() == "bee\nbee\n"


async def test_code_only_asks_about_a_file_the_user_edited_and_keeps_it(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        key = app.sessions.key
        (ws / "a.txt").write_text("two\nthe user's own line\n")  # after the agent's change
        screen = await open_list(pilot)
        await choose(pilot, screen, 1, "f")
        conflict = await wait_for(
            pilot, lambda: isinstance(app.screen, ConflictScreen) and app.screen, "the question"
        )
        assert conflict.files == ["a.txt"]
        await pilot.press("k")  # keep my edit, restore the rest
        await wait_for(pilot, lambda: not (ws / "b.txt").exists(), "b.txt removed")
        await wait_for(pilot, lambda: app.sessions.session is not None, "the session again")
        assert app.sessions.key == key  # the same conversation goes on
        assert (ws / "a.txt").read_text() == "two\nthe user's own line\n"
        notes = [m for m in messages(app.sessions.session.path) if m["role"] == "system"]
        assert notes, "the model is told"
        assert "restored the workspace files to their state before turn 1" in notes[-1]["content"]
        assert "a.txt" in notes[-1]["content"]  # kept, and the model is told


async def test_overwrite_after_the_question_restores_exact_bytes(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        (ws / "a.txt").write_text("mine\n")
        screen = await open_list(pilot)
        await choose(pilot, screen, 1, "f")
        await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen), "the question")
        await pilot.press("o")
        await wait_for(pilot, lambda: not (ws / "a.txt").exists(), "a.txt removed (created)")
        assert not (ws / "b.txt").exists()


async def test_cancel_at_the_question_restores_nothing(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        (ws / "a.txt").write_text("mine\n")
        screen = await open_list(pilot)
        await choose(pilot, screen, 1, "b")
        await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen), "the question")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main_screen, "back to the main screen")
        assert (ws / "a.txt").read_text() == "mine\n"
        assert (ws / "b.txt").exists()


async def test_esc_esc_on_a_draft_does_not_open_the_list(settings, ws):
    app = make_app(settings, two_turns())
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        app.prompt.text = "a draft"
        app.prompt.input.focus()
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.screen is app.main_screen
        assert app.prompt.text == "a draft"


async def test_the_browser_shows_the_branch_under_its_parent(settings, ws):
    from picobot_tui.widgets.session_browser import SessionBrowserScreen
    from picobot_tui.widgets.session_list import SessionTable

    app = make_app(settings, [*two_turns(), text("another session")])
    async with app.run_test(size=(120, 36)) as pilot:
        await run_two_turns(pilot)
        original_key = app.sessions.key
        screen = await open_list(pilot)
        await choose(pilot, screen, 2, "c")
        await wait_for(pilot, lambda: app.prompt.text == "now edit it", "the branch")
        branch_key = app.sessions.key
        app.prompt.text = ""
        await app.run_action("new_session")
        await type_and_send(pilot, "a later, unrelated session")
        await wait_idle(pilot)
        other_key = app.sessions.key
        await app.run_action("sessions")
        browser = await wait_for(
            pilot, lambda: isinstance(app.screen, SessionBrowserScreen) and app.screen, "browser"
        )
        await wait_for(pilot, lambda: browser.query(SessionTable), "the list")
        table = browser.query_one(SessionTable)
        await wait_for(pilot, lambda: len(table.keys) == 3, "three sessions")
        # Newest first, but the branch sits right under the session it came from.
        assert table.keys == [other_key, original_key, branch_key]
        title = str(table.get_cell(branch_key, "title"))
        assert title.startswith("↳ ") and title.endswith(", from turn 2")  # its parent's
        assert not str(table.get_cell(original_key, "title")).startswith("↳")


def test_the_first_frame_imports_nothing_of_checkpoints_rewind_or_diffs(tmp_path: Path) -> None:
    """The app paints before any checkpoint, rewind or diff module is imported."""
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from pathlib import Path
        from picobot_tui.run.options import RunOptions
        from picobot_tui.tui.app import PicobotApp

        WATCH = ("picobot_tui.core.checkpoints", "picobot_tui.tui.rewind",
                 "picobot_tui.tui.diff_view", "picobot_tui.widgets.diff_pane",
                 "picobot_tui.widgets.diff_review", "picobot_tui.widgets.rewind_dialog")
        app = PicobotApp(options=RunOptions(model="demo", workspace=Path({str(tmp_path)!r})))
        seen = {{}}
        original = app._display

        def display(screen, renderable):
            if renderable is not None and "first" not in seen:
                seen["first"] = [m for m in WATCH if m in sys.modules]
            original(screen, renderable)

        app._display = display

        async def main():
            async with app.run_test(size=(120, 36)) as pilot:
                await pilot.pause()

        asyncio.run(main())
        print(json.dumps(seen))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"first": []}

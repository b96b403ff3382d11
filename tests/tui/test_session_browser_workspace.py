"""Pilot tests of the session browser and workspaces (issue 25, point 5): opened in a project
it lists that workspace's sessions, ctrl+o switches to every folder's (with a workspace
column), a folder with none falls back to all; sessions without an answer stay out; a
branch shows the title it got from its parent."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Label

from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.branch import branch
from tests.tui.test_session_browser import (
    SIZE,
    BrowserApp,
    Clock,
    add_session,
    chat,
    ready,
    wait_until,
)

A, B = "/work/projects/alpha", "/work/projects/bravo"


def stocked(tmp_path: Path, here: str | None) -> SessionStore:
    """Oldest first: two sessions in A, one in B, a failed run in A (never answered)."""
    sdir = tmp_path / "sessions"
    in_a = SessionStore(sdir, clock=Clock(), workspace=A)
    add_session(in_a, "cli:a1", chat("first in alpha", "ok"))
    add_session(in_a, "cli:a2", chat("second in alpha", "ok"))
    add_session(SessionStore(sdir, workspace=B), "cli:b1", chat("only in bravo", "ok"))
    add_session(in_a, "cli:failed", [{"role": "user", "content": "never answered"}])
    return SessionStore(sdir, workspace=here)


def cell(screen, key: str, column: str) -> str:
    return screen.table.get_cell(key, column).plain


async def test_opened_in_a_project_it_lists_that_workspace_and_ctrl_o_shows_all(tmp_path):
    app = BrowserApp(stocked(tmp_path, A))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 2)
        assert screen.table.keys == ["cli:a2", "cli:a1"]
        assert "this workspace" in str(screen.table.border_title)
        assert cell(screen, "cli:a2", "model") == "demo"  # one folder: the model column
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: screen.table.row_count == 3, "every folder's")
        assert screen.table.keys == ["cli:b1", "cli:a2", "cli:a1"]  # never the failed run
        assert "all workspaces" in str(screen.table.border_title)
        assert cell(screen, "cli:b1", "workspace") == "bravo"
        assert cell(screen, "cli:a1", "workspace") == "alpha"
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: screen.table.keys == ["cli:a2", "cli:a1"], "back")
        # The filter searches within the workspace too.
        await pilot.press(*"bravo")
        status = screen.query_one("#browser-status", Label)
        await wait_until(pilot, lambda: str(status.content) == "no matches", "no match here")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: screen.table.keys == ["cli:b1"], "a match elsewhere")


async def test_a_folder_without_sessions_opens_on_every_folders(tmp_path):
    app = BrowserApp(stocked(tmp_path, "/work/projects/new"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        assert screen.table.keys == ["cli:b1", "cli:a2", "cli:a1"]
        assert "all workspaces" in str(screen.table.border_title)
        assert cell(screen, "cli:b1", "workspace") == "bravo"


async def test_a_branch_row_shows_the_title_from_its_parent(tmp_path):
    store = SessionStore(tmp_path / "sessions", clock=Clock(), workspace=A)
    add_session(store, "cli:trip", chat("plan the trip", "Booked.", "Car too."))
    child, _ = branch(store, "cli:trip", 2)
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 2)
        assert screen.table.keys == ["cli:trip", child]  # under its parent
        assert cell(screen, child, "title") == "↳ plan the trip, from turn 2"


# -- `--session latest` in the app: this workspace's, or another's with a warning ----------


async def test_latest_in_the_app_is_this_workspaces_and_says_when_it_is_not(settings):
    from tests.tui.app_support import make_app, wait_for

    here = str(settings.workspace_path)
    sdir = settings.sessions_dir
    add_session(SessionStore(sdir, workspace=here), "cli:mine", chat("mine", "ok"))
    add_session(SessionStore(sdir, workspace=B), "cli:theirs", chat("theirs, newer", "ok"))
    app = make_app(settings, session="latest")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.sessions.session is not None, "the resume")
        assert app.sessions.key == "cli:mine"
        assert not [n for n in app._notifications if "this workspace" in n.message]
    app.sessions_close()
    (sdir / "cli_mine.jsonl").unlink()
    again = make_app(settings, session="latest")
    async with again.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: again.sessions.session is not None, "the resume")
        assert again.sessions.key == "cli:theirs"
        said = [n.message for n in again._notifications]
        assert any(f"no session in this workspace ({here})" in m and B in m for m in said)
    again.sessions_close()

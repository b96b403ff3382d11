"""Snapshots of the diff views (issue 14): `/diff`'s review screen side by side (wide, a Python
file highlighted) and unified (narrow), and the approval modal of a change that cannot be
undone. Deterministic: hand-made diffs, settled screens (tests/tui/settle.py). Update
deliberately with `pytest tests/tui/test_diff_snapshots.py --snapshot-update` and look at
every SVG."""

from __future__ import annotations

import difflib

from textual.app import App
from textual.pilot import Pilot

from tests.tui.app_support import make_app
from tests.tui.settle import settle, until
from tests.tui.test_approval_snapshot import _fixed_session

OLD = '''import json
from pathlib import Path


def load(path: Path) -> dict:
    """Read a config file."""
    with open(path) as f:
        return json.load(f)


def save(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data))
'''
NEW = '''import json
from pathlib import Path


def load(path: Path) -> dict:
    """Read a config file (UTF-8, comments allowed)."""
    text = path.read_text(encoding="utf-8")
    return json.loads(strip_comments(text))


def save(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2) + "\\n", encoding="utf-8")
'''


def unified(old: str, new: str, name: str) -> str:
    a = "/dev/null" if not old else f"a/{name}"
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), a, f"b/{name}")
    return "".join(lines)


def _files():
    from picobot_tui.widgets.diff_review import FileItem

    py = unified(OLD, NEW, "app/config.py")
    notes = unified("", "# Notes\n\n- one\n- two\n", "NOTES.md")
    return [
        FileItem("/ws/app/config.py", "app/config.py", 4, 3, py),
        FileItem("/ws/NOTES.md", "NOTES.md", 4, 0, notes),
        FileItem("/ws/logo.png", "logo.png", 0, 0, "Binary files a/logo.png and b/logo.png differ\n", binary=True),
    ]  # fmt: skip


class ReviewApp(App[None]):
    def on_mount(self) -> None:
        from picobot_tui.widgets.diff_review import DiffReviewScreen

        self.push_screen(DiffReviewScreen("Changes of turn 3", _files()))


async def _expanded(pilot: Pilot) -> None:
    from picobot_tui.widgets.diff_review import DiffReviewScreen, FileDiff

    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, DiffReviewScreen), "the review screen")
    await until(pilot, lambda: len(app.screen.query(FileDiff)) == 3, "its rows")
    first = app.screen.query(FileDiff).first()
    first.collapsed = False
    await settle(pilot)


def test_diff_review_side_by_side(snap_compare):
    assert snap_compare(ReviewApp(), terminal_size=(130, 36), run_before=_expanded)


def test_diff_review_unified_when_narrow(snap_compare):
    assert snap_compare(ReviewApp(), terminal_size=(80, 30), run_before=_expanded)


async def _not_undoable(pilot: Pilot) -> None:
    from picobot_tui.widgets.approval import ApprovalScreen

    await _fixed_session(pilot)
    line = (
        "not undoable: data.csv is 6,291,456 bytes, over checkpoints.maxFileBytes (5,242,880), "
        "so no checkpoint is kept"
    )
    diff = unified("id,name\n1,a\n", "id,name\n1,a\n2,b\n", "data.csv")
    args = {"path": "data.csv", "content": "id,name\n1,a\n2,b\n"}
    await pilot.app.push_screen(ApprovalScreen("call_4", "write_file", args, f"{line}\n{diff}"))
    await settle(pilot)


def test_approval_modal_not_undoable(snap_compare, settings):
    assert snap_compare(make_app(settings), terminal_size=(120, 36), run_before=_not_undoable)

"""Snapshot of the session browser: five sessions of four folders (opened in a fifth, so it
lists them all, with their workspace), the second selected, its preview shown."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from picobot_tui.widgets.session_browser import SessionBrowserScreen
from textual.app import App
from textual.pilot import Pilot

from picobot_tui.core.sessions import SessionStore
from tests.tui.settle import settle


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=7)
        return self.now


def build_store(root: Path) -> SessionStore:
    store = SessionStore(root / "sessions", clock=Clock())
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "exec", "arguments": '{"command": "pytest -q tests/parser"}'},
    }
    sessions = [
        (
            "cli:a1b2c3d4-20250301-090000",
            "gpt-4o-mini",
            [
                {"role": "user", "content": "Set up the CI pipeline for the monorepo"},
                {"role": "assistant", "content": "Added `.github/workflows/ci.yml`."},
            ],
        ),
        (
            "cli:b2c3d4e5-20250301-091500",
            "claude-sonnet-4",
            [
                {"role": "user", "content": "Refactor the parser into smaller modules"},
                {"role": "assistant", "content": "I'll run the tests first.", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "42 passed in 0.31s\nok"},
                {
                    "role": "assistant",
                    "content": "All green. Splitting `parser.py` into lexer and [grammar].",
                },
                {"role": "user", "content": "Keep the public API the same."},
                {
                    "role": "assistant",
                    "content": "Done: `parse()` is re-exported.",
                    "interrupted": True,
                },
            ],
        ),
        (
            "cli:c3d4e5f6-20250301-093000",
            None,
            [
                {"role": "user", "content": "Why is the build slow?"},
                {"role": "assistant", "content": "Mostly the Docker layer cache."},
            ],
        ),
        (
            "cli:d4e5f6a7-20250301-094500",
            "demo",
            [
                {"role": "user", "content": "Write the README"},
                {"role": "assistant", "content": "Drafted the README with install steps."},
                {"role": "user", "content": "Add a screenshot section"},
                {"role": "assistant", "content": "Added."},
            ],
        ),
        (
            "cli:e5f6a7b8-20250301-100000",
            "gpt-4o-mini",
            [
                {"role": "user", "content": "Summarise yesterday's incident [sev2]"},
                {"role": "assistant", "content": "The cache node ran out of memory."},
            ],
        ),
    ]
    # The folder each was started in; the last one is an older picobot's (not recorded).
    places = ["/home/dev/monorepo", "/home/dev/parser", "/home/dev/monorepo", "/home/dev/docs"]
    for (key, model, messages), place in zip(sessions, [*places, None], strict=True):
        with store.open(key, model=model, workspace=place) as session:
            for message in messages:
                session.append(message)
    store.rename("cli:c3d4e5f6-20250301-093000", "Build performance notes")
    # Opened in a folder with no sessions yet: the browser lists every folder's, by name.
    return SessionStore(root / "sessions", workspace="/home/dev/new")


class BrowserApp(App[None]):
    def __init__(self, store: SessionStore) -> None:
        super().__init__()
        self.store = store

    def on_mount(self) -> None:
        self.push_screen(SessionBrowserScreen(self.store))


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    """Times are shown in local time: pin the zone so the snapshot is the same everywhere."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_session_browser_snapshot(snap_compare, tmp_path: Path, utc) -> None:
    app = BrowserApp(build_store(tmp_path))

    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, SessionBrowserScreen)
        screen.filter_input.cursor_blink = False
        deadline = time.monotonic() + 20
        while screen.table.row_count < 5 or not screen.preview.loaded:
            assert time.monotonic() < deadline, "the browser never loaded"
            await pilot.pause(0.02)
        await pilot.press("down", "down", "down")
        # The preview follows the highlight after a short debounce, in a worker.
        while not (screen.preview.loaded and screen.preview.key == "cli:b2c3d4e5-20250301-091500"):
            assert time.monotonic() < deadline, "the preview never loaded"
            await pilot.pause(0.02)
        await settle(pilot)  # loaded is not painted: on a loaded machine the frame can lag

    assert snap_compare(app, terminal_size=(120, 34), run_before=run_before)

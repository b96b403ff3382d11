"""Pilot tests for the session browser screen, against the real SessionStore on tmp_path."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from picobot_tui.widgets.session_browser import (
    FIRST_PAGE,
    ConfirmDeleteDialog,
    RenameDialog,
    SessionBrowserScreen,
)
from picobot_tui.widgets.session_preview import render_transcript
from textual.app import App
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Input, Label, Static

from picobot_tui.core.sessions import SessionInfo, SessionStore
from picobot_tui.core.sessions.export import exported_message

SIZE = (120, 40)


class Clock:
    """Each call is one minute later than the last: deterministic, strictly increasing."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def add_session(store: SessionStore, key: str, messages: list[dict], model: str = "demo") -> str:
    with store.open(key, model=model) as session:
        for message in messages:
            session.append(message)
    return key


def chat(title: str, *middle: str) -> list[dict]:
    """A conversation whose first user message (the title) is `title`, `middle` in between."""
    out: list[dict] = [{"role": "user", "content": title}]
    for text in middle:
        out.append({"role": "assistant", "content": text})
        out.append({"role": "user", "content": "go on"})
    out.append({"role": "assistant", "content": "done."})
    return out


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", clock=Clock())


@pytest.fixture
def three(store: SessionStore) -> list[str]:
    """Three sessions, oldest first. Only the middle one mentions "zeppelin", mid-conversation."""
    add_session(store, "cli:alpha", chat("Set up the CI pipeline", "Added a workflow file."))
    add_session(
        store,
        "cli:bravo",
        chat("Refactor the parser", "First pass.", "Renamed the zeppelin module.", "Tests pass."),
        model="gpt-4o",
    )
    add_session(store, "cli:charlie", chat("Write the README", "Drafted it."))
    return ["cli:alpha", "cli:bravo", "cli:charlie"]


class BrowserApp(App[None]):
    """Hosts the screen the way the main app does, and records what it dismissed with."""

    def __init__(self, store: SessionStore, export_dir: Path | None = None) -> None:
        super().__init__()
        self.store = store
        self.export_dir = export_dir
        self.results: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(
            SessionBrowserScreen(self.store, export_dir=self.export_dir), self.results.append
        )


async def wait_until(pilot: Pilot, predicate: Callable[[], bool], what: str = "") -> None:
    """Let workers and messages run until `predicate` holds (a hang guard, not a timing test)."""
    deadline = time.monotonic() + 20
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


def browser(app: App) -> SessionBrowserScreen:
    screen = app.screen
    assert isinstance(screen, SessionBrowserScreen)
    return screen


async def ready(pilot: Pilot, count: int) -> SessionBrowserScreen:
    screen = browser(pilot.app)
    await wait_until(pilot, lambda: screen.table.row_count == count, f"{count} rows")
    await wait_until(pilot, lambda: screen.preview.loaded, "the preview")
    return screen


def preview_text(screen: SessionBrowserScreen) -> str:
    content = screen.preview.query_one("#preview-body", Static).content
    assert isinstance(content, Content)
    return content.plain


def titles(screen: SessionBrowserScreen) -> list[str]:
    table = screen.table
    return [table.get_cell(key, "title").plain for key in table.keys]


async def test_lists_newest_first_with_details_and_preview(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        assert screen.table.keys == ["cli:charlie", "cli:bravo", "cli:alpha"]
        assert titles(screen) == [
            "Write the README",
            "Refactor the parser",
            "Set up the CI pipeline",
        ]
        bravo = screen.table.session("cli:bravo")
        assert bravo is not None and bravo.message_count == 8 and bravo.model == "gpt-4o"
        assert screen.table.get_cell("cli:bravo", "model").plain == "gpt-4o"
        assert screen.table.get_cell("cli:bravo", "count").plain == "8"
        # The newest is selected and previewed.
        assert "Drafted it." in preview_text(screen)
        await pilot.press("down")
        await wait_until(pilot, lambda: "Renamed the zeppelin" in preview_text(screen))


async def test_filter_finds_a_word_from_the_middle_of_a_conversation(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        assert screen.focused is screen.filter_input
        await pilot.press(*"zeppelin")
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == ["cli:bravo"])
        await wait_until(pilot, lambda: "1 match for “zeppelin”" in preview_text(screen))
        # Clearing the filter brings the whole listing back.
        await pilot.press("ctrl+u")
        await wait_until(pilot, lambda: screen.table.row_count == 3)
        # A word in no session: nothing listed, and the preview says so.
        await pilot.press(*"xylophone")
        await wait_until(pilot, lambda: not screen.searching and screen.table.row_count == 0)
        assert "No session matches" in preview_text(screen)
        # Enter with nothing selected does not dismiss.
        await pilot.press("enter")
        assert app.results == []


class GatedStore(SessionStore):
    """A store whose search for "re" yields one hit, then blocks until released."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()
        self.resumed = threading.Event()

    def search(self, query: str, limit: int = 50, **filters) -> Iterator[SessionInfo]:
        for n, info in enumerate(super().search(query, limit, **filters)):
            if query == "re" and n == 1:
                self.release.wait(timeout=20)
                self.resumed.set()
            yield info


async def test_a_new_keystroke_drops_the_running_search(tmp_path):
    store = GatedStore(tmp_path / "sessions", clock=Clock())
    add_session(store, "cli:bravo", chat("Refactor the parser"))
    add_session(store, "cli:charlie", chat("Write the README"))
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 2)
        await pilot.press("r", "e")
        # The first hit streams in at once; the search is then stuck before its second.
        await wait_until(pilot, lambda: screen.table.keys == ["cli:charlie"], "the first hit")
        assert screen.searching
        await pilot.press(*"adme")
        await wait_until(pilot, lambda: not screen.searching, "the new search to end")
        assert screen.table.keys == ["cli:charlie"]
        # Let the superseded search go on: its late hit (bravo) must not reach the list.
        store.release.set()
        await wait_until(pilot, store.resumed.is_set)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.table.keys == ["cli:charlie"]
        assert screen.filter_input.value == "readme"


async def test_typing_on_the_list_goes_to_the_filter(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        screen.table.focus()
        await pilot.press("p", "a", "r")
        assert screen.focused is screen.filter_input
        assert screen.filter_input.value == "par"
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == ["cli:bravo"])


async def test_enter_resumes_the_selected_session(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, 3)
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.results == [("resume", "cli:bravo")]


async def test_enter_on_the_list_resumes_too(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        screen.table.focus()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert app.results == [("resume", "cli:alpha")]


async def test_new_session_and_escape(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, 3)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.results == [("new", None)]
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, 3)
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


async def test_rename_updates_store_and_list(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        await pilot.press("down", "ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameDialog))
        field = app.screen.query_one("#rename-input", Input)
        assert field.value == "Refactor the parser"
        await pilot.press("ctrl+u", *"Parser [v2] rewrite", "enter")
        await wait_until(pilot, lambda: "Parser [v2] rewrite" in titles(screen), "the new title")
        assert app.screen is screen
        assert {i.key: i.title for i in store.list()}["cli:bravo"] == "Parser [v2] rewrite"
        await wait_until(pilot, lambda: preview_text(screen).startswith("Parser [v2] rewrite"))
        # Escape in the dialog changes nothing.
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameDialog))
        await pilot.press("ctrl+u", *"never mind", "escape")
        await pilot.pause()
        assert app.screen is screen
        assert {i.key: i.title for i in store.list()}["cli:bravo"] == "Parser [v2] rewrite"
        assert app.results == []


async def test_delete_asks_first_and_cancel_keeps_the_session(store, three):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 3)
        await pilot.press("down", "ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDeleteDialog))
        await pilot.press("escape")
        await pilot.pause()
        # Enter lands on the focused "Keep" button, the safe default.
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDeleteDialog))
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert screen.table.row_count == 3
        assert store.exists("cli:bravo")

        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDeleteDialog))
        await pilot.press("y")
        await wait_until(pilot, lambda: "cli:bravo" not in screen.table.keys, "the row to go")
        assert not store.exists("cli:bravo")
        assert [i.key for i in store.list()] == ["cli:charlie", "cli:alpha"]
        assert screen.table.keys == ["cli:charlie", "cli:alpha"]
        await wait_until(pilot, lambda: screen.preview.loaded)
        assert app.results == []


async def test_export_writes_the_transcript_as_markdown(store, three, tmp_path):
    export_dir = tmp_path / "exports"
    app = BrowserApp(store, export_dir=export_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot, 3)
        await pilot.press("down", "ctrl+e")
        path = export_dir / "picobot-cli_bravo.md"  # export_filename's rule
        await wait_until(pilot, path.exists, "the export file")
        text = path.read_text(encoding="utf-8")
        assert "Refactor the parser" in text
        assert "Renamed the zeppelin module." in text
        await wait_until(
            pilot, lambda: any(n.message == exported_message(path) for n in app._notifications)
        )


async def test_empty_store(store):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = browser(app)
        await wait_until(
            pilot, lambda: "no sessions" in str(screen.query_one("#browser-status").content)
        )
        assert "No sessions yet." in preview_text(screen)
        for key in ("enter", "ctrl+r", "ctrl+d", "ctrl+e"):
            await pilot.press(key)
        assert app.screen is screen and app.results == []


async def test_two_thousand_sessions_load_lazily_and_search_finds_an_old_one(tmp_path):
    store = SessionStore(tmp_path / "sessions", clock=Clock())
    for n in range(2000):
        middle = "the quokka incident" if n == 7 else f"step {n}"
        add_session(store, f"cli:s{n:04d}", chat(f"Session number {n}", middle))
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = browser(app)
        await wait_until(pilot, lambda: screen.table.row_count > 0, "the first page")
        # Only the first page is loaded: the newest rows, not all 2,000.
        assert screen.table.keys[:3] == ["cli:s1999", "cli:s1998", "cli:s1997"]
        assert screen.table.row_count == FIRST_PAGE
        status = screen.query_one("#browser-status", Label)
        assert str(status.content) == "100+ sessions"
        # Near the end of the first page, the rest is fetched (in one call) and the table
        # grows by a page, not by all of it.
        screen.table.focus()
        await pilot.press("end")
        await wait_until(pilot, lambda: str(status.content) == "2,000 sessions", "the count")
        await wait_until(pilot, lambda: screen.table.row_count > FIRST_PAGE, "the next page")
        assert screen.table.row_count < 2000
        # A word from the middle of one of the oldest sessions.
        await pilot.press(*"quokka")
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == ["cli:s0007"])
        await wait_until(pilot, lambda: "the quokka incident" in preview_text(screen))


def test_preview_renders_text_literally_and_tool_calls_compactly():
    messages = [
        {"role": "user", "content": "show me [bold]this[/bold]"},
        {
            "role": "assistant",
            "content": "Running it. [interrupted]",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "exec", "arguments": '{"command": "ls -la\\nwc -l"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a\nb\nc"},
        {"role": "assistant", "content": "partial", "interrupted": True},
    ]
    text = render_transcript(messages).plain
    assert "show me [bold]this[/bold]" in text
    assert "Running it. [interrupted]" in text
    assert "⚙ exec ls -la wc -l" in text
    assert "↳ exec: a  (+2 lines)" in text
    assert "partial" in text and "(interrupted)" in text


def test_preview_of_a_long_session_keeps_head_tail_and_matches():
    messages = [{"role": "user", "content": f"message {i}"} for i in range(1000)]
    messages[500]["content"] = "the needle is here"
    text = render_transcript(messages, query="needle").plain
    assert "the needle is here" in text
    assert "message 0" in text and "message 999" in text
    assert "message 300" not in text
    assert "messages not shown" in text

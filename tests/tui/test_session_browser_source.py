"""Pilot tests of the session browser's source filter (ctrl+f) and its rendered Markdown
preview, against the real SessionStore on tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from picobot_tui.widgets.session_preview import render_transcript
from textual.content import Content
from textual.widgets import Label, Static

from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.export import exported_message
from tests.tui.test_session_browser import SIZE, BrowserApp, Clock, browser, ready, wait_until


def add(store: SessionStore, key: str, source: str | None, *messages: dict) -> str:
    with store.open(key, model="demo", source=source) as session:
        for message in messages:
            session.append(message)
    return key


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    """Oldest first: one from an older picobot (no source), two TUI, one -m, one --json."""
    store = SessionStore(tmp_path / "sessions", clock=Clock())
    add(store, "cli:legacy", None, user("an old chat about kites"), assistant("Yes."))
    add(store, "cli:tui1", "tui", user("plan the kite festival"), assistant("Sure."))
    add(store, "cli:m1", "headless", user("hi"), assistant("Hello!"))
    add(store, "cli:tui2", "tui", user("refactor the parser"), assistant("Done."))
    add(store, "cli:j1", "json", user("kite prices"), assistant("Cheap."))
    return store


def header(screen) -> str:
    return str(screen.table.border_title)


async def test_ctrl_f_cycles_all_tui_headless_and_says_so_in_the_header(store):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 5)
        assert header(screen) == "Sessions"
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: screen.table.keys == ["cli:tui2", "cli:tui1"], "TUI")
        assert header(screen) == "Sessions · TUI only"
        status = screen.query_one("#browser-status", Label)
        await wait_until(pilot, lambda: str(status.content) == "2 sessions", "the count")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: screen.table.keys == ["cli:j1", "cli:m1"], "headless")
        assert header(screen) == "Sessions · headless only"
        # The preview follows the new selection.
        await wait_until(pilot, lambda: screen.preview.loaded and screen.preview.key == "cli:j1")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: screen.table.row_count == 5, "all again")
        assert header(screen) == "Sessions"
        assert screen.table.keys[-1] == "cli:legacy"  # no source: shown under "all" only
        await pilot.press("enter")
        assert app.results == [("resume", "cli:j1")]


async def test_the_text_filter_searches_within_the_source(store):
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 5)
        await pilot.press(*"kite")
        expected = ["cli:j1", "cli:tui1", "cli:legacy"]
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == expected)
        await pilot.press("ctrl+f")  # TUI
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == ["cli:tui1"])
        await pilot.press("ctrl+f")  # headless
        await wait_until(pilot, lambda: not screen.searching and screen.table.keys == ["cli:j1"])
        # Clearing the text shows the headless listing, not the one from before.
        await pilot.press("ctrl+u")
        await wait_until(pilot, lambda: screen.table.keys == ["cli:j1", "cli:m1"], "the listing")


async def test_a_source_with_no_sessions_says_so(tmp_path: Path):
    store = SessionStore(tmp_path / "sessions", clock=Clock())
    add(store, "cli:m1", "headless", user("hi"), assistant("Hello!"))
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 1)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: screen.table.row_count == 0, "no TUI rows")
        body = screen.preview.query_one("#preview-body", Static)
        await wait_until(pilot, lambda: "No TUI sessions" in str(body.content), "the note")


def styles_of(content: Content, word: str) -> set[str]:
    """The styles of the spans covering the first occurrence of `word`."""
    start = content.plain.index(word)
    end = start + len(word)
    return {str(s.style) for s in content.spans if s.start <= start and s.end >= end}


def test_the_assistant_s_markdown_is_rendered_and_the_user_s_text_kept_literal():
    messages = [
        user("please **do not** render [bold]me[/bold]"),
        assistant(
            "# Plan\n\nRun `pytest -q` and **check** the *output*:\n\n"
            "- first step\n- second step\n\n```python\nprint('hi')\n```\n\n"
            "Keep [grammar] as is."
        ),
    ]
    content = render_transcript(messages)
    text = content.plain
    assert "please **do not** render [bold]me[/bold]" in text
    assert "**check**" not in text and "# Plan" not in text and "```" not in text
    assert "Run pytest -q and check the output:" in text
    assert "• first step\n• second step" in text
    assert "│ print('hi')" in text
    assert "Keep [grammar] as is." in text
    assert "bold" in " ".join(styles_of(content, "check"))
    assert "italic" in styles_of(content, "output")
    assert "bold underline" in styles_of(content, "Plan")


def test_rendered_markdown_lets_no_terminal_escape_through():
    messages = [
        assistant("title \x1b]0;pwned\x07 and `\x1b[2J` and &#27;[31m and &#x9b;31m red"),
        assistant("```\n\x1b[31mred\x1b[0m\n```"),
    ]
    text = render_transcript(messages).plain
    assert not any(c in text for c in "\x1b\x07\x9b")
    assert "title  and" in text and "red" in text


async def test_the_preview_in_the_browser_is_rendered(tmp_path: Path):
    store = SessionStore(tmp_path / "sessions", clock=Clock())
    add(store, "cli:md", "tui", user("show me"), assistant("Use **bold** and `code`."))
    app = BrowserApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot, 1)
        body = browser(app).preview.query_one("#preview-body", Static)
        content = body.content
        assert isinstance(content, Content)
        assert "Use bold and code." in content.plain
        assert "bold" in " ".join(styles_of(content, "bold"))
        assert screen.preview.key == "cli:md"


async def test_ctrl_e_exports_to_the_default_directory_with_the_full_path(store, picobot_home):
    app = BrowserApp(store)  # as the TUI opens it: no export directory given
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot, 5)
        await pilot.press("ctrl+e")
        path = picobot_home / "exports" / "picobot-cli_j1.md"  # the same name as /export's
        await wait_until(pilot, path.exists, "the export file")
        assert "kite prices" in path.read_text(encoding="utf-8")
        # The full path: the file's name on a line of its own, then its folder.
        said = exported_message(path)
        assert said == f"Exported {path.name}\nin {path.parent}"
        await wait_until(pilot, lambda: any(n.message == said for n in app._notifications))

"""The keys a Claude Code or Codex user expects (issue 15, 6-13), driven with Pilot on the
real app: Ctrl+C, Ctrl+Q during a turn, Tab cycling, rename focus, backspace-then-Enter,
scrolling from the prompt, the persistent prompt history and `ui.keys`."""

from __future__ import annotations

import json
import stat

from picobot_tui.widgets.blocks import AssistantMessage, Notice, UserMessage
from picobot_tui.widgets.quit_dialog import QuitDialog
from picobot_tui.widgets.session_browser import SessionBrowserScreen
from picobot_tui.widgets.session_dialogs import RenameDialog
from textual import events
from textual.widgets import Input

from picobot_tui.core.llm.scripted import text
from picobot_tui.tui.prompt_history import history_path
from tests.tui.app_support import (
    GatedModel,
    make_app,
    session_lines,
    transcript_text,
    type_and_send,
    wait_for,
    wait_idle,
)

SIZE = (120, 36)


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


# -- 6: Ctrl+C and Ctrl+Q -------------------------------------------------------------------


async def test_ctrl_c_interrupts_the_turn_then_twice_on_an_idle_prompt_quits(settings):
    model = GatedModel(["partial ", "answer"])
    app = make_app(settings, model)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await type_and_send(pilot, "tell me")
        await wait_for(pilot, lambda: model.streamed.is_set(), "the stream")
        await pilot.press("ctrl+c")
        await wait_idle(pilot)
        message = app.conversation.transcript.query_one(AssistantMessage)
        assert message.interrupted and session_lines(app)[-1]["interrupted"] is True
        assert app.is_running  # interrupting is not quitting
        assert "Press Ctrl+C again to quit" not in notes(app)

        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and "Press Ctrl+C again to quit" in notes(app)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")
    assert app.return_code == 0


async def test_a_second_ctrl_c_after_the_window_only_warns_again(settings):
    app = make_app(settings)
    now = [100.0]
    app.ctrl_c.clock = lambda: now[0]
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+c")
        now[0] += app.ctrl_c.window + 0.5
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert notes(app).count("Press Ctrl+C again to quit") == 2
        now[0] += 1.0
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_ctrl_c_with_a_selection_in_the_prompt_copies_it(settings):
    app = make_app(settings)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.prompt.text = "copy me"
        app.prompt.input.select_all()
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "copy me"
        assert app.is_running and "Press Ctrl+C again to quit" not in notes(app)


async def test_ctrl_q_during_a_turn_asks_first(settings):
    model = GatedModel(["working"])
    app = make_app(settings, model)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "go")
        await wait_for(pilot, lambda: model.streamed.is_set(), "the stream")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog), "the dialog")
        await pilot.press("enter")  # the focus is on "Keep working"
        await wait_for(pilot, lambda: not isinstance(app.screen, QuitDialog))
        assert app.is_running and app.busy
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog), "the dialog")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")
    assert app.return_code == 0
    assert session_lines(app)[-1]["interrupted"] is True


async def test_ctrl_q_on_an_idle_app_quits_at_once(settings):
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


# -- 7: Tab ---------------------------------------------------------------------------------


async def test_tab_cycles_the_completions_and_keeps_the_focus(settings):
    app = make_app(settings, [text("ok")])
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.prompt
        await pilot.press("/", "c", "o")
        assert prompt.completions.display
        candidates = [c.text for c in prompt.complete("/co")]
        assert candidates[:2] == ["/compact", "/copy"]
        await pilot.press("tab")
        assert prompt.text == "/compact" and prompt.completions.display
        await pilot.press("tab")
        assert prompt.text == "/copy"
        for _ in range(len(candidates) - 1):
            await pilot.press("tab")
        assert prompt.text == "/compact"  # round again
        await pilot.press("shift+tab")
        assert prompt.text == candidates[-1]
        assert app.focused is prompt.input

        # Tab with nothing to complete does nothing, and typing still reaches the prompt.
        prompt.text = ""
        await pilot.press("tab", "tab", "h", "i")
        assert app.focused is prompt.input and prompt.text == "hi"
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.conversation.transcript.query_one(UserMessage).source == "hi"


async def test_enter_on_a_cycled_completion_runs_it(settings):
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/", "h", "e", "tab")
        assert app.prompt.text == "/help" and not app.prompt.completions.display
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.conversation.transcript.query(Notice), "the help")
        assert "Commands:" in app.conversation.transcript.query_one(Notice).text


# -- 8: rename in the session browser ---------------------------------------------------------


async def test_rename_in_the_browser_takes_typing_at_once(settings):
    app = make_app(settings, [text("answer")])
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "first title")
        await wait_idle(pilot)
        key = app.sessions.key
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "browser")
        screen = app.screen
        await wait_for(pilot, lambda: screen.table.row_count == 1, "the row")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, RenameDialog), "the dialog")
        assert isinstance(app.focused, Input) and app.focused.id == "rename-input"
        await pilot.press(*"renamed", "enter")
        await wait_for(
            pilot,
            lambda: {i.key: i.title for i in app.runtime.store.list()}.get(key) == "renamed",
            "the new title",
        )


# -- 9: backspace then Enter --------------------------------------------------------------------


def type_at_once(app, *keys: str) -> None:
    """Queue key events back to back, as a fast typist's terminal delivers them (Pilot's
    `press` waits until each key has been handled, which hides the race)."""
    for key in keys:
        char = key if len(key) == 1 else " " if key == "space" else None
        app.post_message(events.Key(key, char))


async def test_backspace_then_enter_sends_the_text_on_screen(settings):
    app = make_app(settings, [text("one"), text("two")])
    async with app.run_test(size=SIZE) as pilot:
        type_at_once(app, *"hellox", "backspace", "enter")
        await wait_for(pilot, lambda: app.conversation.transcript.query(UserMessage))
        await wait_idle(pilot)
        assert app.conversation.transcript.query_one(UserMessage).source == "hello"
        # The same for the other editing keys, and for text typed after them.
        type_at_once(app, *"abc", "space", *"def", "ctrl+w", *"xyz", "backspace", "enter")
        await wait_for(pilot, lambda: len(app.conversation.transcript.query(UserMessage)) == 2)
        await wait_idle(pilot)
        users = [m["content"] for m in session_lines(app) if m["role"] == "user"]
        assert users == ["hello", "abc xy"]


# -- 10: scrolling the transcript from the prompt -----------------------------------------------


async def test_page_keys_scroll_the_transcript_from_the_prompt(settings):
    long = "\n\n".join(f"paragraph {i}" for i in range(80))
    app = make_app(settings, [text(long)])
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "long please")
        await wait_idle(pilot)
        transcript = app.conversation.transcript
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, "an overflowing transcript")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await wait_for(pilot, lambda: transcript.scroll_y < bottom, "a page up")
        assert app.focused is app.prompt.input
        await pilot.press("home")  # the prompt is empty: the transcript's top
        await wait_for(pilot, lambda: transcript.scroll_y == 0, "the top")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: transcript.scroll_y > 0, "a page down")
        await pilot.press("end")
        await wait_for(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "bottom")
        assert transcript.following

        # With text in the prompt Home and End move its cursor, not the transcript.
        await pilot.press("pageup")
        await wait_for(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
        scrolled = transcript.scroll_y
        await pilot.press(*"abc", "home")
        await pilot.pause()
        assert app.prompt.input.cursor_location == (0, 0)
        assert transcript.scroll_y == scrolled


# -- 11: the prompt history across runs ------------------------------------------------------


async def test_the_prompt_history_persists_per_workspace(settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-history-secret-0123456789")
    first = make_app(settings, [text("a"), text("b")])
    async with first.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "first message")
        await wait_idle(pilot)
        await type_and_send(pilot, "key sk-history-secret-0123456789 inside")
        await wait_idle(pilot)
        await type_and_send(pilot, "/help")
        await pilot.pause()
    path = history_path(settings.workspace_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = [json.loads(line)["text"] for line in path.read_text().splitlines()]
    assert stored[0] == "first message" and stored[2] == "/help"
    assert "sk-history-secret" not in path.read_text()  # the runtime's scrubber masked it

    second = make_app(settings)
    async with second.run_test(size=SIZE) as pilot:
        prompt = second.prompt
        await wait_for(pilot, lambda: len(prompt.history) == 3, "the history loaded")
        await pilot.press("up")
        assert prompt.text == "/help"
        await pilot.press("up")
        assert prompt.text == stored[1]
        await pilot.press("up")
        assert prompt.text == "first message"
        await pilot.press("down", "down", "down")
        assert prompt.text == ""

    other = settings.model_copy(deep=True)
    elsewhere = settings.workspace_path.parent / "elsewhere"
    elsewhere.mkdir()
    other.agents.defaults.workspace = str(elsewhere)
    third = make_app(other)
    async with third.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: third.prompt_history.path is not None, "the history")
        await pilot.pause()
        assert third.prompt.history == []  # another workspace, another history


async def test_the_history_file_keeps_the_newest_entries(tmp_path):
    from picobot_tui.tui.prompt_history import PromptHistory

    path = tmp_path / "h.jsonl"
    history = PromptHistory(limit=10)
    history.add("before the file was open")
    assert history.open(path, str) == []
    for i in range(30):
        history.add(f"entry {i}")
    history.add("entry 29")  # a repeat of the last one is not stored again
    reopened = PromptHistory(limit=10).open(path, str)
    assert reopened == [f"entry {i}" for i in range(20, 30)]
    assert len(path.read_text().splitlines()) <= 11


# -- 13: configurable keys -----------------------------------------------------------------


async def test_ctrl_g_toggles_the_gauge_and_ui_keys_moves_it(settings):
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not app.gauge.display
        await pilot.press("ctrl+b")  # tmux's prefix: not picobot's any more
        await pilot.pause()
        assert not app.gauge.display

    settings.ui.keys = {"toggle_gauge": "f5", "toggle_timeline": "x", "nonsense": "ctrl+y"}
    app = make_app(settings)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f5")
        await pilot.pause()
        assert not app.gauge.display
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not app.gauge.display  # moved, not added
        await pilot.press("ctrl+t")  # a bad entry keeps the default
        await pilot.pause()
        assert not app.timeline.display
        shown = transcript_text(app)
        assert "ui.keys.toggle_timeline" in shown and "typed into the prompt" in shown
        assert "ui.keys.nonsense: unknown binding" in shown


# -- 12: the resume hint ----------------------------------------------------------------------


async def test_the_resume_hint_names_the_session_only_once_it_holds_messages(settings):
    from picobot_tui.tui.launch import resume_hint

    app = make_app(settings, [text("answer")])
    assert resume_hint(app) is None  # never started
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready, "the app ready")
        assert resume_hint(app) is None  # a session that was never opened
        await type_and_send(pilot, "hello")
        await wait_idle(pilot)
        session_id = app.sessions.key.removeprefix("cli:")
        assert resume_hint(app) == (
            f"Resume this session with: picobot agent --session {session_id}"
        )


def test_ui_keys_entries_are_checked_and_clashes_refused():
    from picobot_tui.tui.keys import keymap

    mapped, warnings = keymap(
        {
            "toggle_gauge": "F5, ctrl+shift+g",
            "quit": "ctrl+t",  # toggle_timeline keeps ctrl+t
            "sessions": 5,
            "new_session": "ctrl+nope",
            "interrupt": "shift+x",
        }
    )
    assert mapped == {"picobot.toggle_gauge": "f5,ctrl+shift+g"}
    assert [w.split(":")[0] for w in warnings] == [
        "ui.keys.sessions",
        "ui.keys.new_session",
        "ui.keys.interrupt",
        "ui.keys.quit",
    ]
    assert "ctrl+t is already bound" in warnings[-1]
    # Moving the key away lets another binding take it.
    mapped, warnings = keymap({"toggle_timeline": "alt+t", "quit": "ctrl+t"})
    assert warnings == [] and mapped["picobot.quit"] == "ctrl+t"

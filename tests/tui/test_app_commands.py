"""Slash commands, the prompt (history, completion, newlines), keys, layout, copy, resume."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from picobot_tui.widgets.blocks import AssistantMessage, Notice, UserMessage
from rich.markdown import Markdown as RichMarkdown

from picobot_tui.core.llm.scripted import ScriptedModel, text, tool_call
from picobot_tui.core.sessions.export import export_filename, exported_message
from picobot_tui.tui.commands import parse_slash
from tests.tui.app_support import (
    GatedModel,
    make_app,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)
from tests.tui.compaction_support import answering


def test_parse_slash():
    assert parse_slash("/model  openai/gpt-4o ") == ("model", "openai/gpt-4o")
    assert parse_slash("/HELP") == ("help", "")
    assert parse_slash("hello /help") is None
    assert parse_slash("//not a command") is None


async def test_help_clear_and_unknown_commands(settings):
    app = make_app(settings, [text("hi")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "/help")
        await pilot.pause()
        notice = app.conversation.transcript.query_one(Notice)
        assert "/resume ID" in notice.text and "Ctrl+S" in notice.text
        await type_and_send(pilot, "/clear")
        await pilot.pause()
        assert app.conversation.blocks() == []
        await type_and_send(pilot, "/frobnicate")
        await pilot.pause()
        assert app.conversation.blocks() == []  # not sent to the model
        assert app.sessions.session is None  # nothing was sent, no session file


async def test_model_command_switches_the_model_for_next_turns(settings):
    app = make_app(settings, [text("one")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "/model openai/gpt-4.1")
        await pilot.pause()
        assert app.runtime.loop.model_name == "openai/gpt-4.1"
        assert app.status.model == "openai/gpt-4.1"
        await type_and_send(pilot, "hi")
        await wait_idle(pilot)
        assert app.runtime.model.requests[-1].model == "openai/gpt-4.1"


async def test_new_session_and_resume_by_id_restore_conversation_and_gauge(settings):
    steps = [tool_call("list_dir", {"path": "."}, call_id="c1"), text("first answer")]
    app = make_app(settings, [*steps, text("second")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first question")
        await wait_idle(pilot)
        first_key = app.sessions.session.key
        estimated = app.gauge.estimated
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert app.sessions.session is None and app.sessions.key != first_key
        assert app.conversation.blocks() == [] and app.timeline.entries == {}
        await type_and_send(pilot, "other session")
        await wait_idle(pilot)
        second_key = app.sessions.session.key
        assert second_key != first_key

        await type_and_send(pilot, f"/resume {first_key.removeprefix('cli:')}")
        await wait_for(pilot, lambda: app.sessions.key == first_key)
        await pilot.pause()
        blocks = app.conversation.blocks()
        assert [type(b).__name__ for b in blocks] == [
            "UserMessage",
            "ToolBlock",
            "AssistantMessage",
        ]
        assert app.conversation.tool_block("c1").status == "ok"
        assert app.timeline.entries["c1"].status == "ok"
        assert abs(app.gauge.estimated - estimated) < estimated * 0.1
        assert first_key.removeprefix("cli:") in app.status.session


async def test_start_on_a_session_with_session_argument(settings):
    first = make_app(settings, [tool_call("list_dir", {"path": "."}, call_id="c1"), text("ok")])
    async with first.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "remember the word zebra")
        await wait_idle(pilot)
        key = first.sessions.session.key
    first.sessions_close()

    app = make_app(settings, [text("still here")], session="latest")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.sessions.key == key
        user = app.conversation.transcript.query_one(UserMessage)
        assert user.source == "remember the word zebra"
        assert app.conversation.tool_block("c1") is not None
        await type_and_send(pilot, "and now?")
        await wait_idle(pilot)
    contents = [m.get("content") for m in session_lines(app)]
    assert contents[0] == "remember the word zebra" and contents[-1] == "still here"


async def test_sessions_key_opens_the_browser_and_its_result_resumes(settings):
    from picobot_tui.widgets.session_browser import SessionBrowserScreen

    app = make_app(settings, [text("stored answer")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "something to find later")
        await wait_idle(pilot)
        key = app.sessions.session.key
        await pilot.press("ctrl+n")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen))
        app.screen.dismiss(("resume", key))
        await wait_for(pilot, lambda: app.sessions.key == key)
        await pilot.pause()
        assert app.conversation.last_response() == "stored answer"
        await type_and_send(pilot, "/sessions")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionBrowserScreen))
        app.screen.dismiss(("new", None))
        await wait_for(pilot, lambda: app.sessions.session is None)
        assert app.conversation.blocks() == []


async def test_export_and_copy(settings, tmp_path, monkeypatch, picobot_home):
    monkeypatch.chdir(tmp_path)
    exports = picobot_home / "exports"  # the default directory, never the current one
    answer = "Here:\n\n```python\nprint('hi')\n```\n"
    app = make_app(settings, [text(answer)])
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await type_and_send(pilot, "/export")
        await pilot.pause()
        assert not exports.exists()  # nothing to export yet
        await type_and_send(pilot, "show code")
        await wait_idle(pilot)
        await type_and_send(pilot, "/export")
        await pilot.pause()
        [exported] = list(exports.glob("picobot-*.md"))
        assert exported.name == export_filename(app.sessions.session.key)  # as ctrl+e names it
        assert "show code" in exported.read_text()
        assert (exported.parent.stat().st_mode & 0o777) == 0o700
        assert list(tmp_path.glob("picobot-*.md")) == []
        # The name on a line of its own, then its folder: a toast never breaks the name.
        assert any(n.message == exported_message(exported) for n in app._notifications)

        await type_and_send(pilot, "/copy")
        await pilot.pause()
        assert app.clipboard == answer
        await type_and_send(pilot, "/copy code")
        await pilot.pause()
        assert app.clipboard == "print('hi')"
        # a chosen message: focus it and press y
        user = app.conversation.transcript.query_one(UserMessage)
        user.focus()
        await pilot.press("y")
        assert app.clipboard == "show code"
        message = app.conversation.transcript.query_one(AssistantMessage)
        message.focus()
        await pilot.press("c")
        assert app.clipboard == "print('hi')"


async def test_compact_command(settings):
    settings.agents.defaults.token_budget = 3000
    long = "word " * 200
    app = make_app(settings, ScriptedModel([], default=answering(long)))
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "/compact")
        await pilot.pause()
        assert app.gauge.compression == ""
        await type_and_send(pilot, "q1 " + long)
        await wait_idle(pilot)
        await type_and_send(pilot, "q2 " + long)
        await wait_idle(pilot)
        before = app.gauge.estimated
        await type_and_send(pilot, "/compact")
        await wait_idle(pilot)
        assert app.gauge.compression.startswith("compressed")
        assert app.gauge.estimated < before


async def test_prompt_newlines_history_and_completion(settings):
    app = make_app(settings, [text("a"), text("b")])
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.prompt
        await pilot.press("l", "i", "n", "e", "1", "ctrl+j", "l", "i", "n", "e", "2")
        assert prompt.text == "line1\nline2"
        await pilot.press("shift+enter")
        assert prompt.text == "line1\nline2\n"
        await pilot.press("backspace", "enter")
        await wait_idle(pilot)
        assert app.conversation.transcript.query_one(UserMessage).source == "line1\nline2"
        await type_and_send(pilot, "second")
        await wait_idle(pilot)
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "line1\nline2"
        await pilot.press("down")  # cursor is on the last line: next entry
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"

        prompt.text = ""
        await pilot.press("/", "r", "e", "s")  # "/re" is also /rewind
        completions = prompt.completions
        assert completions.display
        ids = [completions.get_option_at_index(i).id for i in range(completions.option_count)]
        assert ids == ["resume"]
        await pilot.press("tab")
        assert prompt.text == "/resume " and not completions.display
        prompt.text = ""
        await pilot.press("/", "h", "e")  # "/h" is also /hooks
        await pilot.press("enter")  # Enter on a completion without arguments runs it
        await pilot.pause()
        assert "Commands:" in app.conversation.transcript.query_one(Notice).text


async def test_toggle_panes_and_the_narrow_layout(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        side = app.query_one("#side")
        assert side.display and app.timeline.display and app.gauge.display
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.timeline.display and app.gauge.display
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert not side.display
        await pilot.press("ctrl+t", "ctrl+g")
        await pilot.pause()
        assert side.display and app.timeline.display and app.gauge.display
        assert not app.status.show_budget

    narrow = make_app(settings)
    async with narrow.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert narrow.main_screen.has_class("-narrow")
        assert not narrow.query_one("#side").display
        assert narrow.status.show_budget  # the budget moves to the status bar
        assert narrow.prompt.input.region.width > 60
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert narrow.query_one("#side").display


async def test_new_output_hint_when_scrolled_up(settings):
    model = GatedModel(["start"], tail=["line\n\n" * 40])
    app = make_app(settings, model)
    async with app.run_test(size=(100, 24)) as pilot:
        for n in range(3):
            await app.conversation.add_notice("info", f"filler {n}\n" + "x\n" * 10)
        await pilot.pause()
        transcript = app.conversation.transcript
        assert transcript.max_scroll_y > 0 and transcript.following
        transcript.scroll_home(animate=False)
        await pilot.pause()
        assert not transcript.following
        hint = app.conversation.hint
        await type_and_send(pilot, "go")  # sending jumps back down...
        await pilot.pause()
        assert transcript.following
        transcript.scroll_home(animate=False)  # ...and the user scrolls up again
        await pilot.pause()
        model.gate.set()
        await wait_idle(pilot)
        assert hint.display and transcript.scroll_y == 0  # not pulled down
        await pilot.click("#new-output")
        await pilot.pause()
        assert not hint.display and transcript.following
        assert transcript.scroll_y == transcript.max_scroll_y


async def test_command_palette_lists_the_app_commands(settings):
    app = make_app(settings)
    async with app.run_test(size=(120, 36)):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for expected in [
            "New session",
            "Sessions",
            "Switch model",
            "Compact history",
            "Export session",
            "Toggle timeline",
            "Toggle gauge",
            "Theme",
        ]:
            assert expected in titles


async def test_light_theme_renders(settings):
    settings.ui.theme = "textual-light"
    app = make_app(settings, [text("light")])
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.theme == "textual-light" and not app.current_theme.dark
        await type_and_send(pilot, "hi")
        await wait_idle(pilot)
        block = app.conversation.transcript.query_one(AssistantMessage)
        rendered = block.render()  # a finished message draws its own markdown
        assert isinstance(rendered, RichMarkdown) and rendered.markup == "light"
        assert rendered.code_theme == "friendly"  # the light code theme


def test_importing_the_app_does_not_import_litellm():
    code = (
        "import sys, picobot_tui.tui.app, picobot_tui.run.runtime; "
        "assert 'litellm' not in sys.modules, 'litellm imported'"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_every_slash_and_palette_command_names_an_app_action():
    from textual.actions import parse

    from picobot_tui.tui.app import PicobotApp
    from picobot_tui.tui.commands import PALETTE_COMMANDS, SLASH_COMMANDS, slash_action

    actions = [c.action for c in PALETTE_COMMANDS]
    actions += [slash_action(c.name, arg) for c in SLASH_COMMANDS for arg in ("", "x")]
    for action in actions:
        _, name, _ = parse(action)
        assert callable(getattr(PicobotApp, f"action_{name}", None)), action
    assert slash_action("resume", "it's") == 'resume("it\'s")'
    assert parse(slash_action("nope", ""))[1:] == ("warn", ("/nope: Type /help for the list.",))

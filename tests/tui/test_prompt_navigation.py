"""Which keys the prompt's input hands up as `Navigate` (history, completion) and which it
keeps: the input decides when the key arrives, the PromptArea acts on the message later."""

from __future__ import annotations

from picobot_tui.widgets.prompt import PromptArea, SlashCommand
from textual.app import App, ComposeResult


class PromptApp(App[None]):
    AUTO_FOCUS = "#prompt-input"

    def compose(self) -> ComposeResult:
        yield PromptArea([SlashCommand("resume", "ID", "resume a session")], cursor_blink=False)


async def test_up_inside_a_multiline_draft_moves_the_cursor_not_the_history():
    async with PromptApp().run_test() as pilot:
        prompt = pilot.app.query_one(PromptArea)
        prompt.history = ["earlier"]
        prompt.input.has_history = True
        prompt.text = "one\ntwo"
        assert not prompt.input.navigates("up")  # cursor on the last line: the TextArea's
        await pilot.press("up")
        assert prompt.text == "one\ntwo" and prompt.input.cursor_location[0] == 0
        assert prompt.input.navigates("up")
        await pilot.press("up")  # first line: the history's
        await pilot.pause()
        assert prompt.text == "earlier" and prompt.input.in_history


async def test_escape_closes_the_completion_list_and_keeps_the_text():
    async with PromptApp().run_test() as pilot:
        prompt = pilot.app.query_one(PromptArea)
        await pilot.press("/", "r")
        assert prompt.completions.display and prompt.input.completing
        await pilot.press("escape")
        await pilot.pause()
        assert not prompt.completions.display and not prompt.input.completing
        assert prompt.text == "/r"
        assert not prompt.input.navigates("escape")  # nothing open: the key is not handed up

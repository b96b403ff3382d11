"""Custom commands and skills in the TUI, through Pilot: they join the completion list,
`/help` and the palette; `/name args` is sent as the filled-in message; a file taking a
built-in name is refused with a notice naming it; an untrusted workspace's are not loaded."""

from __future__ import annotations

from pathlib import Path

from picobot_tui.core.custom_commands import RESERVED
from picobot_tui.core.llm.scripted import ScriptedModel, text
from picobot_tui.tui.commands import _SLASH_ACTIONS, SLASH_COMMANDS
from tests.tui.app_support import make_app, make_settings, transcript_text, type_and_send, wait_idle


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".picobot" / "commands").mkdir(parents=True)
    (ws / ".picobot" / "commands" / "review.md").write_text(
        "---\ndescription: review a path\nargument-hint: PATH\n---\nReview $ARGUMENTS closely.\n"
    )
    (ws / ".picobot" / "commands" / "clear.md").write_text("a clash")
    (ws / "skills" / "tidy").mkdir(parents=True)
    (ws / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: tidy the tree\n---\nTIDY-BODY\n"
    )
    return ws


def test_the_reserved_names_are_the_tuis_builtins() -> None:
    assert {c.name for c in SLASH_COMMANDS} | set(_SLASH_ACTIONS) == RESERVED


async def test_custom_commands_complete_show_and_send(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    model = ScriptedModel([text("done")])
    app = make_app(make_settings(ws), model)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot)
        shown = transcript_text(app)
        await pilot.press("/", "r", "e", "v")
        await pilot.pause()
        options = [str(app.prompt.completions.get_option_at_index(i).prompt)
                   for i in range(app.prompt.completions.option_count)]  # fmt: skip
        await pilot.press("escape")
        app.prompt.text = ""
        await type_and_send(pilot, "/help")
        await pilot.pause()
        helped = transcript_text(app)
        palette = [c.title for c in app.get_system_commands(app.screen)]
        await type_and_send(pilot, "/review src/app.py")
        await wait_idle(pilot)
    assert "clear.md: /clear is a built-in command; this command is not loaded" in shown
    assert any("/review" in o and "review a path" in o for o in options), options
    assert "Yours:" in helped and "/review PATH" in helped and "/tidy" in helped
    assert "/review" in palette and "/tidy" in palette
    sent = model.requests[-1].messages[-1]["content"]
    assert str(sent).startswith("Review src/app.py closely.")


async def test_an_untrusted_workspace_loads_none_of_its_commands(tmp_path: Path) -> None:
    from picobot_tui.run.runtime import make_untrusted

    ws = _workspace(tmp_path)
    app = make_app(make_settings(ws), [])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot)
        assert app.runtime is not None
        make_untrusted(app.runtime)
        await app.load_commands()
        assert app.custom == {}
        assert [c.name for c in app.prompt.commands] == [c.name for c in SLASH_COMMANDS]

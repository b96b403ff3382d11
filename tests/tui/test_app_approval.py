"""The approval modal: allow once, allow for the session, always allow (saved), deny."""

from __future__ import annotations

import json
from pathlib import Path

from picobot_tui.widgets.approval import ApprovalScreen
from textual.widgets import Button, Static

from picobot_tui.core.llm.scripted import text, tool_call
from tests.tui.app_support import (
    make_app,
    session_lines,
    type_and_send,
    wait_for,
    wait_idle,
)


def write(path: str, content: str, call_id: str) -> list:
    return tool_call("write_file", {"path": path, "content": content}, call_id=call_id)


async def wait_modal(pilot) -> ApprovalScreen:
    return await wait_for(
        pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen) and pilot.app.screen, "modal"
    )


async def test_allow_once_runs_the_tool_and_shows_the_diff(settings):
    workspace = Path(settings.agents.defaults.workspace)
    app = make_app(settings, [write("a.txt", "hello\n", "w1"), text("written")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        modal = await wait_modal(pilot)
        assert app.status.state == "waiting for approval"
        assert modal.tool_name == "write_file"
        assert "+hello" in modal.preview  # a diff of the change
        body = modal.query_one("#approval-preview-body", Static)
        assert body.display
        await pilot.press("y")
        await wait_idle(pilot)
        assert (workspace / "a.txt").read_text() == "hello\n"
        assert app.conversation.tool_block("w1").status == "ok"


async def test_deny_goes_back_to_the_model_as_a_tool_result(settings):
    workspace = Path(settings.agents.defaults.workspace)
    app = make_app(settings, [write("a.txt", "x", "w1"), text("ok, I won't")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        await wait_modal(pilot)
        await pilot.click("#choice-deny")
        await wait_idle(pilot)
        assert not (workspace / "a.txt").exists()
        block = app.conversation.tool_block("w1")
        assert block.status == "denied" and block.has_class("-denied")
        assert app.timeline.entries["w1"].status == "denied"
    result = next(m for m in session_lines(app) if m["role"] == "tool")
    assert result["status"] == "denied" and result["content"].startswith("Denied")


async def test_escape_in_the_modal_denies(settings):
    app = make_app(settings, [write("a.txt", "x", "w1"), text("fine")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        await wait_modal(pilot)
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.conversation.tool_block("w1").status == "denied"
        assert app.is_running


async def test_allow_for_session_does_not_ask_again(settings):
    workspace = Path(settings.agents.defaults.workspace)
    steps = [write("a.txt", "1", "w1"), text("one"), write("b.txt", "2", "w2"), text("two")]
    app = make_app(settings, steps)
    asked: list[str] = []
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first")
        modal = await wait_modal(pilot)
        asked.append(modal.call_id)
        await pilot.press("s")
        await wait_idle(pilot)
        await type_and_send(pilot, "second")
        await wait_idle(pilot)
        assert asked == ["w1"]
        assert (workspace / "b.txt").read_text() == "2"
        assert app.conversation.tool_block("w2").status == "ok"
    assert "write_file" not in settings.tools.always_allow


async def test_always_everywhere_is_saved_to_config_keeping_other_keys(settings, picobot_home):
    config = picobot_home / "config.json"
    config.write_text(
        json.dumps({"agents": {"defaults": {"model": "x/y"}}, "tools": {"approval": "ask"}})
    )
    app = make_app(settings, [write("a.txt", "1", "w1"), text("done")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        await wait_modal(pilot)
        await pilot.press("e")
        await wait_idle(pilot)
        assert app.conversation.tool_block("w1").status == "ok"
    assert not (picobot_home / "permissions.json").exists()
    saved = json.loads(config.read_text())
    assert saved["tools"] == {"approval": "ask", "alwaysAllow": ["write_file"]}
    assert saved["agents"] == {"defaults": {"model": "x/y"}}
    assert "write_file" in settings.tools.always_allow


async def test_escape_while_the_modal_waits_closes_it_and_cancels_the_call(settings):
    app = make_app(settings, [write("a.txt", "1", "w1"), text("never")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        await wait_modal(pilot)
        app.action_interrupt()  # e.g. from the command palette
        await wait_idle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.conversation.tool_block("w1").status == "cancelled"
    result = next(m for m in session_lines(app) if m["role"] == "tool")
    assert result["tool_call_id"] == "w1" and result["status"] == "cancelled"


# -- the modal shows exactly what will happen ------------------------------------------------


def painted(widget) -> str:
    """The lines the widget paints (what the user sees), joined."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def test_escapes_and_markup_in_a_command_are_shown_literally(settings):
    workspace = Path(settings.agents.defaults.workspace)
    command = "echo hello \x1b]0;x; touch PWNED; #\x07 [bold red]x[/] [link=http://e]y[/link]"
    app = make_app(settings, [tool_call("exec", {"command": command}, call_id="e1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "run it")
        modal = await wait_modal(pilot)
        await pilot.pause()
        shown = painted(modal.query_one("#approval-preview-body", Static))
        assert "echo hello ␛]0;x; touch PWNED; #␇ [bold red]x[/] [link=http://e]y[/link]" in shown
        assert not modal.query("#approval-hidden")  # nothing left out
        await pilot.press("n")
        await wait_idle(pilot)
    assert not (workspace / "PWNED").exists()


async def test_a_long_preview_says_what_it_hides_and_f_shows_everything(settings):
    from picobot_tui.widgets.approval import FullPreviewScreen
    from textual.widgets import TextArea

    content = "".join(f"line {i}\n" for i in range(1_000)) + "touch PWNED\n"
    app = make_app(settings, [write("big.txt", content, "w1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        modal = await wait_modal(pilot)
        await pilot.pause()
        note = painted(modal.query_one("#approval-hidden", Static))
        assert "more lines" in note and "not shown" in note and "press f" in note
        assert "touch PWNED" not in modal.preview and "+touch PWNED" in modal.full
        await pilot.press("f")
        full = await wait_for(
            pilot, lambda: isinstance(app.screen, FullPreviewScreen) and app.screen, "full view"
        )
        area = full.query_one(TextArea)
        assert area.text == modal.full and area.read_only
        await pilot.press("end")  # the view scrolls to the very end (TextArea key)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is modal, "back to the modal")
        await pilot.press("n")
        await wait_idle(pilot)
        assert app.conversation.tool_block("w1").status == "denied"


async def test_web_fetch_asks_per_host_and_always_saves_the_host_here(settings, picobot_home):
    from tests.support.capture_site import CaptureSite

    settings.tools.web.allow_private = True
    with CaptureSite() as site:
        steps = [
            tool_call("web_fetch", {"url": f"{site.url}/?d=one"}, call_id="f1"),
            tool_call("web_fetch", {"url": f"{site.url}/?d=two"}, call_id="f2"),
            text("fetched both"),
        ]
        app = make_app(settings, steps)
        async with app.run_test(size=(120, 36)) as pilot:
            await type_and_send(pilot, "fetch")
            modal = await wait_modal(pilot)
            assert modal.host == "127.0.0.1"
            labels = [str(b.label) for b in modal.query(Button)]
            assert "Host always here [a]" in labels and "Everywhere [e]" in labels
            assert "Host for session [s]" in labels
            line = painted(modal.query_one("#approval-always", Static))
            assert "always allows web_fetch of 127.0.0.1 in this workspace" in line
            assert "fetch from 127.0.0.1" in painted(modal.query_one("#approval-title", Static))
            assert not site.requests  # nothing sent while the user decides
            await pilot.press("a")
            await wait_idle(pilot)
            assert app.conversation.tool_block("f2").status == "ok"  # not asked again
        assert site.requests == ["/?d=one", "/?d=two"]
    saved = json.loads((picobot_home / "permissions.json").read_text())["workspaces"]
    workspace = str(Path(settings.agents.defaults.workspace).resolve())
    assert saved == {workspace: {"allowHosts": ["127.0.0.1"]}}  # the host, not web_fetch
    assert app.runtime is not None and app.runtime.tools.ctx.saved.hosts == ["127.0.0.1"]
    assert settings.tools.web.allow_hosts == [] and not (picobot_home / "config.json").exists()

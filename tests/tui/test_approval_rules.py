"""The approval modal's finer choices (issue 15, items 15 and 16): exec's "always" is a command
prefix rule shown exactly, file tools' "always" is per tool, a deny can carry a reason the
model reads, `/permissions` lists and removes the saved rules, and a call waiting for approval
says so in its block and the timeline, with its timer stopped."""

from __future__ import annotations

import json
from pathlib import Path

from picobot_tui.widgets.approval import ApprovalScreen
from picobot_tui.widgets.permissions import PermissionsScreen
from textual.widgets import Button, Input, OptionList, Static

from picobot_tui.core.llm.scripted import ScriptedModel, text, tool_call
from tests.tui.app_support import make_app, type_and_send, wait_for, wait_idle
from tests.tui.test_app_approval import painted, wait_modal, write


def run(command: str, call_id: str) -> list:
    return tool_call("exec", {"command": command}, call_id=call_id)


def tool_results(model: ScriptedModel) -> dict[str, str]:
    """tool_call_id -> content of every tool result the model was sent."""
    return {
        m["tool_call_id"]: m["content"]
        for r in model.requests
        for m in r.messages
        if m.get("role") == "tool"
    }


def labels(modal: ApprovalScreen) -> list[str]:
    return [str(b.label) for b in modal.query(Button)]


async def test_exec_always_saves_the_shown_prefix_and_only_that_prefix_runs(settings, picobot_home):
    workspace = Path(settings.agents.defaults.workspace)
    steps = [
        run("echo hi there", "e1"),
        text("one"),
        run("echo hi again", "e2"),  # the rule allows it: not asked
        run("echo hi; touch PWNED", "e3"),  # a second command: asked
        text("two"),
    ]
    model = ScriptedModel(steps)
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first")
        modal = await wait_modal(pilot)
        assert modal.prefix == "echo hi"
        line = painted(modal.query_one("#approval-always", Static))
        assert "always allows commands starting with echo hi" in line
        assert "exec(echo hi:*)" in line
        assert "Always allow [a]" in labels(modal)
        await pilot.press("a")
        await wait_idle(pilot)
        await type_and_send(pilot, "second")
        modal = await wait_modal(pilot)
        assert modal.call_id == "e3"
        await pilot.press("n")
        await wait_idle(pilot)
        assert app.conversation.tool_block("e2").status == "ok"
        assert app.conversation.tool_block("e3").status == "denied"
    assert not (workspace / "PWNED").exists()
    saved = json.loads((picobot_home / "config.json").read_text())
    assert saved["tools"]["alwaysAllow"] == ["exec(echo hi:*)"]  # never the whole of exec
    assert settings.tools.always_allow == ["exec(echo hi:*)"]
    assert "hi again" in tool_results(model)["e2"]


async def test_a_command_with_no_safe_prefix_offers_no_always(settings, picobot_home):
    app = make_app(settings, [run("sh -c 'echo x'", "e1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "go")
        modal = await wait_modal(pilot)
        assert modal.prefix is None
        assert not modal.query("#choice-always")
        assert "No safe command prefix" in painted(modal.query_one("#approval-always", Static))
        await pilot.press("a")  # does nothing but say so
        await pilot.pause()
        assert app.screen is modal
        await pilot.press("n")
        await wait_idle(pilot)
    assert not (picobot_home / "config.json").exists()


async def test_file_tools_always_allow_names_the_tool(settings):
    app = make_app(settings, [write("a.txt", "1", "w1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        modal = await wait_modal(pilot)
        assert "always allows every write_file call" in painted(
            modal.query_one("#approval-always", Static)
        )
        assert labels(modal) == [
            "Allow once [y]", "Allow for session [s]", "Always allow [a]", "Deny [n]"
        ]  # fmt: skip
        await pilot.press("n")
        await wait_idle(pilot)


async def test_deny_with_a_reason_reaches_the_model(settings):
    workspace = Path(settings.agents.defaults.workspace)
    model = ScriptedModel([write("a.txt", "x", "w1"), text("ok, b.txt then")])
    app = make_app(settings, model)
    reason = "say no: use b.txt, and ask first"  # y, s, a, n typed into the field, not keys
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        modal = await wait_modal(pilot)
        await pilot.press("r")
        field = modal.query_one("#approval-reason", Input)
        assert field.has_focus
        await pilot.press(*reason)
        assert field.value == reason and app.screen is modal
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.conversation.tool_block("w1").status == "denied"
    assert not (workspace / "a.txt").exists()
    got = tool_results(model)["w1"]
    assert got.startswith("Denied: the user did not allow this write_file call.")
    assert got.endswith(f"The user's reason: {reason}")


async def test_deny_without_a_reason_is_the_plain_denial(settings):
    model = ScriptedModel([write("a.txt", "x", "w1"), text("ok")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write it")
        await wait_modal(pilot)
        await pilot.press("n")
        await wait_idle(pilot)
    assert tool_results(model)["w1"] == "Denied: the user did not allow this write_file call."


async def test_waiting_for_approval_stops_the_timer_and_says_so(settings):
    app = make_app(settings, [write("a.txt", "1", "w1"), text("done")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        await wait_modal(pilot)
        block = app.conversation.tool_block("w1")
        header = block.query_one(".tool-header", Static)
        await wait_for(pilot, lambda: "waiting for approval" in painted(header), "header")
        assert "running…" not in painted(header)
        entry = app.timeline.entries["w1"]
        assert entry.waiting and app.timeline.running() == []  # tick() leaves it alone
        shown = str(app.timeline.option_list.get_option("w1").prompt)
        assert "waiting for approval" in shown
        await pilot.press("y")
        await wait_idle(pilot)
        assert not entry.waiting and entry.status == "ok"
        assert "waiting" not in painted(header) and "ok" in painted(header)


async def test_permissions_lists_the_rules_and_removes_one(settings, picobot_home):
    config = picobot_home / "config.json"
    rules = ["write_file", "exec(git status:*)"]
    config.write_text(
        json.dumps({"tools": {"alwaysAllow": rules, "web": {"allowHosts": ["a.example"]}}})
    )
    settings.tools.always_allow = list(rules)
    settings.tools.web.allow_hosts = ["a.example"]
    app = make_app(settings, [run("git status --short", "e1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.ready, "ready")
        await type_and_send(pilot, "/permissions")
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, PermissionsScreen) and app.screen, "list"
        )
        assert screen.labels == [
            "write_file: every write_file call  (tools.alwaysAllow)",
            "exec(git status:*): commands starting with git status  (tools.alwaysAllow)",
            "web_fetch of a.example  (tools.web.allowHosts)",
        ]
        await pilot.press("down", "d")
        screen = await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, PermissionsScreen)
                and app.screen is not screen
                and app.screen
            ),
            "the list again",
        )
        assert len(screen.labels) == 2 and "git status" not in " ".join(screen.labels)
        assert screen.query_one(OptionList).highlighted == 1  # on the next rule
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PermissionsScreen))
        # The removal holds at once: the command is asked about again.
        await type_and_send(pilot, "status")
        modal = await wait_modal(pilot)
        assert modal.call_id == "e1"
        await pilot.press("n")
        await wait_idle(pilot)
    saved = json.loads(config.read_text())["tools"]
    assert saved == {"alwaysAllow": ["write_file"], "web": {"allowHosts": ["a.example"]}}
    assert settings.tools.always_allow == ["write_file"]

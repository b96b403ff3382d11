"""The approval modal's finer choices (issue 15, items 15 and 16; issue 21, point 2): exec's
"always" is a command prefix rule shown exactly (or the exact command, for a program the
reviewed table does not list), saved for this workspace (`a`) or everywhere (`e`); a saved
rule that does not cover a call says why; file tools' "always" is per tool, a deny can carry
a reason the model reads, `/permissions` lists the saved rules with their scope and removes
them, and a call waiting for approval says so in its block and the timeline, with its timer
stopped."""

from __future__ import annotations

import json
import subprocess
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


def flat(text: str) -> str:
    """Painted text with its wrapping undone."""
    return " ".join(text.split())


def labels(modal: ApprovalScreen) -> list[str]:
    return [str(b.label) for b in modal.query(Button)]


async def test_exec_always_saves_the_shown_prefix_here_and_only_that_prefix_runs(
    settings, picobot_home
):
    workspace = Path(settings.agents.defaults.workspace).resolve()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    steps = [
        run("git status --short", "e1"),
        text("one"),
        run("git status", "e2"),  # the rule allows it: not asked
        run("git status; touch PWNED", "e3"),  # a second command: asked
        text("two"),
    ]
    model = ScriptedModel(steps)
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "first")
        modal = await wait_modal(pilot)
        assert modal.prefix == "git status" and modal.rule == "exec(git status:*)"
        line = flat(painted(modal.query_one("#approval-always", Static)))
        assert "always allows commands starting with git status in this workspace" in line
        assert str(workspace) in line and "e the same in every workspace (config.json)" in line
        assert "exec(git status:*)" in line
        assert labels(modal) == [
            "Allow once [y]", "Allow for session [s]", "Always here [a]", "Everywhere [e]",
            "Deny [n]",
        ]  # fmt: skip
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
    saved = json.loads((picobot_home / "permissions.json").read_text())
    # never the whole of exec, and for this workspace only
    assert saved["workspaces"] == {str(workspace): {"alwaysAllow": ["exec(git status:*)"]}}
    assert app.runtime is not None and app.runtime.tools.ctx.saved.tools == ["exec(git status:*)"]
    assert settings.tools.always_allow == []
    assert "e2" in tool_results(model)


async def test_a_rule_that_does_not_cover_an_option_says_why_and_offers_the_exact_command(
    settings, picobot_home
):
    workspace = Path(settings.agents.defaults.workspace).resolve()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    settings.tools.always_allow = ["exec(git log:*)"]
    model = ScriptedModel([run("git log --output=Makefile", "e1"), text("ok")])
    app = make_app(settings, model)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "log")
        modal = await wait_modal(pilot)
        note = flat(painted(modal.query_one("#approval-note", Static)))
        assert "not covered by exec(git log:*): --output=Makefile: writes the output" in note
        assert modal.prefix is None and modal.rule == "exec(git log --output=Makefile)"
        line = flat(painted(modal.query_one("#approval-always", Static)))
        assert "always allows exactly this command in this workspace" in line
        await pilot.press("e")  # the exact command, everywhere
        await wait_idle(pilot)
    assert settings.tools.always_allow == ["exec(git log:*)", "exec(git log --output=Makefile)"]
    assert not (picobot_home / "permissions.json").exists()
    assert (workspace / "Makefile").exists()  # the user allowed it, having seen it


async def test_on_a_narrow_terminal_every_button_is_whole_and_on_screen(settings):
    """Five buttons do not fit in one row under 100 columns: each must still be shown whole
    (a cut "Deny" or "Everywhere" is a choice the user cannot see)."""
    app = make_app(settings, [run("git status --short", "e1"), text("ok")])
    async with app.run_test(size=(80, 40)) as pilot:
        await type_and_send(pilot, "go")
        modal = await wait_modal(pilot)
        assert modal.has_class("-narrow")
        buttons = list(modal.query(Button))
        assert len(buttons) == 5
        for button in buttons:
            label = str(button.label)
            shown = button.region
            assert shown.width >= len(label) and shown.height > 0, (label, shown)
            assert shown.right <= 80 and shown.bottom <= 40, (label, shown)
        await pilot.press("n")
        await wait_idle(pilot)


async def test_a_command_no_rule_could_match_offers_no_always(settings, picobot_home):
    app = make_app(settings, [run("echo x | sh", "e1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "go")
        modal = await wait_modal(pilot)
        assert modal.prefix is None and modal.rule is None
        assert not modal.query("#choice-always") and not modal.query("#choice-always_everywhere")
        assert "No rule could match" in painted(modal.query_one("#approval-always", Static))
        await pilot.press("a")  # does nothing but say so
        await pilot.press("e")
        await pilot.pause()
        assert app.screen is modal
        await pilot.press("n")
        await wait_idle(pilot)
    assert not (picobot_home / "config.json").exists()
    assert not (picobot_home / "permissions.json").exists()


async def test_file_tools_always_allow_names_the_tool(settings):
    app = make_app(settings, [write("a.txt", "1", "w1"), text("ok")])
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "write")
        modal = await wait_modal(pilot)
        assert "always allows every write_file call in this workspace" in painted(
            modal.query_one("#approval-always", Static)
        )
        assert labels(modal) == [
            "Allow once [y]", "Allow for session [s]", "Always here [a]", "Everywhere [e]",
            "Deny [n]",
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


async def test_permissions_lists_the_rules_with_their_scope_and_removes_one(settings, picobot_home):
    workspace = Path(settings.agents.defaults.workspace).resolve()
    config = picobot_home / "config.json"
    rules = ["write_file", "exec(git status:*)"]
    config.write_text(
        json.dumps({"tools": {"alwaysAllow": rules, "web": {"allowHosts": ["a.example"]}}})
    )
    (picobot_home / "permissions.json").write_text(
        json.dumps(
            {
                "version": 1,
                "workspaces": {
                    str(workspace): {"alwaysAllow": ["exec(git log:*)", "exec(cp:*)"]},
                    "/elsewhere": {"alwaysAllow": ["exec(make:*)"]},
                },
            }
        )
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
        options = "options that run programs, load config or write files still ask"
        assert screen.labels == [
            f"[this workspace] exec(git log:*): commands starting with git log; {options}",
            "[this workspace] exec(cp:*): commands starting with cp; every option still asks "
            "(cp is not in picobot's reviewed table)",
            "[everywhere] write_file: every write_file call",
            f"[everywhere] exec(git status:*): commands starting with git status; {options}",
            "[everywhere] web_fetch of a.example",
        ]  # /elsewhere's rule is not in effect here
        title = flat(painted(screen.query_one("#permissions-title", Static)))
        assert f"this workspace ({workspace}): permissions.json" in title
        assert "everywhere: config.json" in title
        await pilot.press("down", "down", "down", "d")  # exec(git status:*), everywhere
        screen = await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, PermissionsScreen)
                and app.screen is not screen
                and app.screen
            ),
            "the list again",
        )
        assert len(screen.labels) == 4 and "git status" not in " ".join(screen.labels)
        assert screen.query_one(OptionList).highlighted == 3  # on the next rule
        await pilot.press("up", "up", "up", "d")  # exec(git log:*), this workspace
        screen = await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, PermissionsScreen)
                and app.screen is not screen
                and len(app.screen.labels) == 3
                and app.screen
            ),
            "the list once more",
        )
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
    here = json.loads((picobot_home / "permissions.json").read_text())["workspaces"]
    assert here == {
        str(workspace): {"alwaysAllow": ["exec(cp:*)"]},
        "/elsewhere": {"alwaysAllow": ["exec(make:*)"]},
    }

"""Issue 21, point 1: a restore never writes, makes or removes anything through a folder
that became a link. An approved script replaces `a/` with `a -> <outside>`; then
`picobot sessions rewind --to 1 --code` (with and without `--force`), `/rewind` and a revert
from `/diff` must leave the outside folder exactly as it was, byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from picobot_tui.widgets.diff_review import DiffReviewScreen, FileDiff
from picobot_tui.widgets.rewind_dialog import ConflictScreen, RewindScreen

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm.scripted import text, tool_call
from tests.checkpoints.link_support import exec_, rewind, run_turn, tree, write
from tests.tui.app_support import make_app, make_settings, type_and_send, wait_for, wait_idle
from tests.tui.test_rewind import choose


def _attack_layout(ws: Path, outside: Path, outside_has_key: bool) -> None:
    """The user's `a/` with a key file; a folder outside with files of its own."""
    (ws / "a").mkdir()
    (ws / "a" / "authorized_keys").write_text("ssh-ed25519 the-users-key\n")
    os.chmod(ws / "a" / "authorized_keys", 0o600)
    (ws / "a" / "notes.txt").write_text("the user's notes\n")
    outside.mkdir()
    (outside / "unrelated.txt").write_text("outside, not the workspace\n")
    if outside_has_key:
        (outside / "authorized_keys").write_text("ssh-ed25519 outside-key\n")


SWAP = "swap.sh"
"""The agent's script (exec refuses a command naming a path outside; a script's text is
not looked at)."""


def _swap(outside: Path) -> str:
    return f"rm -rf a\nln -s {outside} a\n"


def _attack_turn(outside: Path) -> list:
    """The agent's turn: a key written, then an approved script swaps `a/` for a link."""
    return [
        write("a/authorized_keys", "ssh-ed25519 ATTACKER\n", "w1"),
        write(SWAP, _swap(outside), "w2"),
        exec_(f"sh {SWAP}", "x1"),
    ]


def _tui_turn(outside: Path) -> list:
    return [
        tool_call("write_file", {"path": "a/authorized_keys", "content": "ATTACKER\n"}),
        tool_call("write_file", {"path": SWAP, "content": _swap(outside)}),
        tool_call("exec", {"command": f"sh {SWAP}"}),
        text("done"),
    ]


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize("outside_has_key", [False, True], ids=["no-key-outside", "key-outside"])
def test_sessions_rewind_puts_the_folder_back_and_never_writes_outside(
    configured_home, llm_server, tmp_path, outside_has_key, force
):
    ws, outside = configured_home / "workspace", tmp_path / "outside"
    _attack_layout(ws, outside, outside_has_key)
    before_ws, before_outside = tree(ws), tree(outside)
    key = run_turn(configured_home, llm_server, _attack_turn(outside), first=True)
    assert os.path.islink(ws / "a")  # the script ran
    assert tree(outside) == before_outside
    done = rewind(configured_home, key, *(["--force"] if force else []))
    # The link is the agent's own (the checkpoint says `a/` was a folder): no conflict, it
    # goes, the folder comes back, then the files go back into it.
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a/authorized_keys" in done.stdout and "Restored 4 file(s)" in done.stdout
    assert tree(outside) == before_outside  # nothing appeared, changed or went outside
    assert not os.path.islink(ws / "a")
    assert tree(ws) == before_ws  # the workspace copy is back, exact (mode 0600 too)


async def test_tui_rewind_puts_the_folder_back_and_never_writes_outside(tmp_path):
    ws, outside = tmp_path / "workspace", tmp_path / "outside"
    ws.mkdir()
    _attack_layout(ws, outside, outside_has_key=False)
    before_ws, before_outside = tree(ws), tree(outside)
    settings = _tui_settings(ws)
    app = make_app(settings, _tui_turn(outside))
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_send(pilot, "go")
        await wait_idle(pilot)
        assert os.path.islink(ws / "a")
        await app.run_action("rewind")
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, RewindScreen) and app.screen, "the list"
        )
        await choose(pilot, screen, 1, "f")  # code only
        # No question: the link is the agent's own, not a later edit.
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ConflictScreen) or not os.path.islink(ws / "a"),
            "the restore",
        )
        assert not isinstance(app.screen, ConflictScreen)
        await wait_for(pilot, lambda: tree(ws) == before_ws, "the workspace restored")
    assert tree(outside) == before_outside
    assert tree(ws) == before_ws


async def test_diff_revert_of_one_file_refuses_it_and_names_the_link(tmp_path):
    """Reverting `a/authorized_keys` alone (the `/diff` row's `r`) does not revert `a`, so
    `a` stays a link: that file is refused, named, and nothing outside is touched."""
    ws, outside = tmp_path / "workspace", tmp_path / "outside"
    ws.mkdir()
    _attack_layout(ws, outside, outside_has_key=False)
    before_outside = tree(outside)
    settings = _tui_settings(ws)
    app = make_app(settings, _tui_turn(outside))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await type_and_send(pilot, "go")
        await wait_idle(pilot)
        await type_and_send(pilot, "/diff")
        screen = await wait_for(
            pilot, lambda: isinstance(app.screen, DiffReviewScreen) and app.screen, "diff"
        )
        await wait_for(pilot, lambda: screen.query(FileDiff), "rows")
        row = next(r for r in screen.query(FileDiff) if r.item.shown == "a/authorized_keys")
        row.query_one("CollapsibleTitle").focus()
        await pilot.pause()
        await pilot.press("r")
        said = await wait_for(
            pilot,
            lambda: [n.message for n in app._notifications if "authorized_keys" in n.message],
            "the answer",
        )
        assert not isinstance(app.screen, ConflictScreen)  # nothing to overwrite
    assert any("a/ is a link now" in m and "not restored" in m for m in said), said
    assert tree(outside) == before_outside
    assert os.readlink(ws / "a") == str(outside)  # left as it is, never followed


def _tui_settings(ws: Path) -> Settings:
    settings = make_settings(ws)
    settings.tools.approval = "auto"
    settings.tools.exec.sandbox = "none"
    return settings

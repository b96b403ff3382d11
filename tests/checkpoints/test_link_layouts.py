"""Issue 21, point 1, other layouts, through `picobot sessions rewind --to 1 --code`: a link
two folders down, a link to a folder inside the workspace, a file the agent's script made a
folder, and a link the user made (refused and named, `--force` or not). Each ends with the
folder outside the workspace exactly as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.checkpoints.link_support import exec_, rewind, run_turn, tree, write
from tests.headless.conftest import read_messages, session_files

FORCE = pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "force"])


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "unrelated.txt").write_text("not the workspace's\n")
    return outside


def _script(ws_turn: list, body: str) -> list:
    """The agent writes a script and runs it (exec refuses a command naming a path
    outside; a script's text is not looked at)."""
    return [*ws_turn, write("swap.sh", body, "w9"), exec_("sh swap.sh", "x9")]


def test_a_link_two_folders_down_is_removed_and_the_folder_comes_back(
    configured_home, llm_server, tmp_path
):
    ws, outside = configured_home / "workspace", _outside(tmp_path)
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "key").write_text("the user's key\n")
    (ws / "a" / "top.txt").write_text("top\n")
    before_ws, before_outside = tree(ws), tree(outside)
    steps = [write("a/b/key", "ATTACKER\n", "w1")]
    key = run_turn(
        configured_home,
        llm_server,
        _script(steps, f"rm -rf a/b\nln -s {outside} a/b\n"),
        first=True,
    )
    assert os.path.islink(ws / "a" / "b")
    done = rewind(configured_home, key)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree(outside) == before_outside
    assert tree(ws) == before_ws


@FORCE
def test_a_link_to_a_folder_inside_the_workspace_is_not_written_through(
    configured_home, llm_server, tmp_path, force
):
    """`mv a b && ln -s b a`: a restore through `a` would write `b/x` (then remove it as
    the agent's new file): `a/x` lost. The link goes, `a/` comes back, `b/` goes."""
    ws, outside = configured_home / "workspace", _outside(tmp_path)
    (ws / "a").mkdir()
    (ws / "a" / "x").write_text("x as the user had it\n")
    before_ws, before_outside = tree(ws), tree(outside)
    steps = [write("a/x", "the agent's x\n", "w1")]
    key = run_turn(configured_home, llm_server, _script(steps, "mv a b\nln -s b a\n"), first=True)
    assert os.readlink(ws / "a") == "b"
    done = rewind(configured_home, key, *force)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree(ws) == before_ws
    assert tree(outside) == before_outside


@FORCE
def test_a_file_the_script_made_a_folder_comes_back_as_the_file(
    configured_home, llm_server, tmp_path, force
):
    """`rm f && mkdir f && … > f/inner`: the folder is the agent's (git sees `f` deleted and
    `f/inner` made), so no conflict; its file goes, then the folder, then `f` comes back."""
    ws, outside = configured_home / "workspace", _outside(tmp_path)
    (ws / "f").write_text("f was a file\n")
    before_ws, before_outside = tree(ws), tree(outside)
    key = run_turn(
        configured_home,
        llm_server,
        _script([], "rm f\nmkdir f\necho inner > f/inner\n"),
        first=True,
    )
    assert (ws / "f" / "inner").is_file()
    done = rewind(configured_home, key, *force)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree(ws) == before_ws
    assert tree(outside) == before_outside


@pytest.mark.parametrize("outside_has_key", [False, True], ids=["no-key-outside", "key-outside"])
def test_a_link_the_user_made_is_refused_and_named_force_or_not(
    configured_home, llm_server, tmp_path, outside_has_key
):
    """The agent changed `a/authorized_keys`; then the user (not picobot) replaced `a/`
    with a link. That file is a conflict that names the link, never written, even with
    --force; the link is left as the user made it."""
    ws, outside = configured_home / "workspace", _outside(tmp_path)
    if outside_has_key:
        (outside / "authorized_keys").write_text("ssh-ed25519 outside-key\n")
    (ws / "a").mkdir()
    (ws / "a" / "authorized_keys").write_text("ssh-ed25519 the-users-key\n")
    (ws / "other.txt").write_text("other\n")
    steps = [
        write("a/authorized_keys", "ssh-ed25519 ATTACKER\n", "w1"),
        write("other.txt", "the agent's other\n", "w2"),
    ]
    key = run_turn(configured_home, llm_server, steps, first=True)
    (ws / "a" / "authorized_keys").unlink()
    (ws / "a").rmdir()
    os.symlink(outside, ws / "a")
    before_ws, before_outside = tree(ws), tree(outside)
    forced = rewind(configured_home, key, "--force")
    assert tree(outside) == before_outside  # nothing appeared, changed or went outside
    assert forced.returncode == 1  # a file could not be restored
    assert "could not restore a/authorized_keys: a/ is a link now" in forced.stderr
    assert "other.txt" in forced.stdout  # the rest is restored
    assert (ws / "other.txt").read_text() == "other\n"
    assert os.readlink(ws / "a") == str(outside)
    [session] = session_files(configured_home)
    note = read_messages(session)[-1]
    assert note["role"] == "system" and "a/authorized_keys could not be restored" in note["content"]
    # Asked again: still a conflict that says why, nothing restored.
    before_ws = tree(ws)
    plain = rewind(configured_home, key)
    assert plain.returncode == 1
    assert "a/authorized_keys (a/ is a link now; not restored)" in plain.stderr
    assert "never restored, --force or not" in plain.stderr
    assert tree(ws) == before_ws and tree(outside) == before_outside

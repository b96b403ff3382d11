"""Rewind in each of the issue's workspaces: exact bytes and modes, the user's .git
untouched, conflicts asked about, .gitignore honoured, links never followed out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from picobot_tui.core.checkpoints.diff import file_diffs, turn_stats
from picobot_tui.core.checkpoints.restore import apply_restore, plan_restore
from tests.checkpoints.conftest import Agent, dot_git_hash, make_workspace, tree_state


def _agent_turns(agent: Agent, kind: str) -> None:
    """Two turns that edit, create, delete and chmod through every file-changing tool."""
    agent.call(1, "edit_file", path="src/app.py", old_text="return 1", new_text="return 2")
    agent.call(1, "write_file", path="src/new/deep/made.py", content="print('new')\n")
    agent.call(1, "write_file", path="src/new/also.py", content="")
    agent.call(1, "todo", action="add", text="check the build")
    agent.call(1, "exec", command="printf 'x\\n' >> README.md && rm run.sh && chmod +x src/app.py")
    agent.call(2, "write_file", path="README.md", content="rewritten\n")
    agent.call(2, "exec", command="mkdir -p gen/x && printf '\\000\\377' > gen/x/out.bin")
    agent.call(2, "exec", command="printf 'two' > gen/two.txt")
    if kind == "ignored":
        agent.call(2, "exec", command="printf 'new' > build/new.o && rm build/old.o")
    if kind == "binary":
        agent.call(2, "exec", command="printf '\\376\\375' >> blob.bin && rm latin1.txt")
    if kind == "symlink":
        # A link removed (writing through the one pointing out is refused by the guard).
        agent.call(2, "exec", command="rm link-in")


def test_rewind_restores_exact_state_and_leaves_dot_git_alone(workspace):
    kind, ws = workspace
    before = tree_state(ws)
    git_before = dot_git_hash(ws) if (ws / ".git").exists() else None
    agent = Agent(ws)
    _agent_turns(agent, kind)
    assert tree_state(ws) != before
    timeline = agent.timeline()
    stats = turn_stats(agent.store, timeline)
    assert set(stats) == {1, 2}
    plan = plan_restore(agent.store, timeline, 1)
    assert plan.conflicts == [] and plan.not_undoable == [] and plan.uncheckpointed == []
    result = apply_restore(agent.store, plan)
    assert result.failed == [] and result.kept == []
    after = tree_state(ws)
    if kind == "ignored":  # never recorded, so never touched: build output stays as it is
        assert after.pop("build/new.o") == ("file", after_mode(ws, "build/new.o"), b"new")
        assert "build/old.o" not in after
        before.pop("build/old.o")
    if kind == "symlink":  # the link is a link again; what the other points to untouched
        assert os.readlink(ws / "link-in") == "src/app.py"
        assert (ws.parent / "outside" / "secret.txt").read_text() == "outside\n"
    assert after == before
    assert not (ws / "gen").exists() and not (ws / "src" / "new").exists()
    if git_before is not None:
        assert dot_git_hash(ws) == git_before


def after_mode(ws: Path, rel: str) -> int:
    return os.stat(ws / rel).st_mode & 0o7777


def test_rewind_to_the_second_turn_keeps_the_first(workspace):
    kind, ws = workspace
    os.chmod(ws / "src" / "app.py", 0o600)  # not git's 0644: known from the edit below
    agent = Agent(ws)
    agent.call(1, "edit_file", path="src/app.py", old_text="return 1", new_text="return 2")
    middle = tree_state(ws)
    agent.call(2, "write_file", path="README.md", content="gone\n")
    agent.call(2, "exec", command="rm run.sh")  # git keeps the exec bit: 0755 comes back
    agent.call(2, "exec", command="rm src/app.py")  # its 0600 was seen by edit_file
    apply_restore(agent.store, plan_restore(agent.store, agent.timeline(), 2))
    assert tree_state(ws) == middle


def test_a_file_edited_afterwards_is_a_conflict_never_overwritten(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    (ws / "b.txt").write_text("bee\n")
    agent = Agent(ws)
    agent.call(1, "edit_file", path="a.txt", old_text="one", new_text="two")
    agent.call(1, "exec", command="printf 'agent\\n' > b.txt")
    (ws / "a.txt").write_text("the user's edit\n")  # after the agent's change
    plan = plan_restore(agent.store, agent.timeline(), 1)
    assert [f.shown for f in plan.conflicts] == ["a.txt"]
    result = apply_restore(agent.store, plan)  # no answer: the conflict is kept
    assert [f.shown for f in result.kept] == ["a.txt"]
    assert (ws / "a.txt").read_text() == "the user's edit\n"
    assert (ws / "b.txt").read_text() == "bee\n"
    plan = plan_restore(agent.store, agent.timeline(), 1)
    apply_restore(agent.store, plan, overwrite={ws / "a.txt"})  # the user said yes
    assert (ws / "a.txt").read_text() == "one\n"


def test_diff_per_turn_and_session(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("1\n2\n3\n")
    agent = Agent(ws)
    agent.call(1, "edit_file", path="a.txt", old_text="2\n", new_text="two\nzwei\n")
    agent.call(2, "write_file", path="b.txt", content="new\n")
    agent.call(2, "exec", command="printf '\\000\\001' > c.bin")
    turn1 = file_diffs(agent.store, agent.timeline(), 1)
    assert [(d.shown, d.added, d.removed) for d in turn1] == [("a.txt", 2, 1)]
    both = file_diffs(agent.store, agent.timeline())
    assert [d.shown for d in both] == ["a.txt", "b.txt", "c.bin"]
    assert "--- /dev/null\n+++ b/b.txt\n" in both[1].text
    assert both[2].binary and "Binary files /dev/null and b/c.bin differ" in both[2].text


def test_the_users_git_hooks_and_config_never_run(tmp_path, monkeypatch):
    """A global core.hooksPath with a post-index-change hook: the shadow repository's
    `git add` must not run it (hooks are off), nor touch the user's repository."""
    ws = tmp_path / "ws"
    make_workspace(ws, "git")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    for name in ("post-index-change", "pre-commit", "post-checkout"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        os.chmod(hooks / name, 0o755)
    home = tmp_path / "user-home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    probe = tmp_path / "probe"
    probe.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q"], cwd=probe, env=env, check=True)
    (probe / "f").write_text("f")
    subprocess.run(["git", "add", "f"], cwd=probe, env=env, check=True)
    assert marker.exists()  # the hook is live for plain git
    marker.unlink()
    git_before = dot_git_hash(ws)
    agent = Agent(ws)
    agent.call(1, "exec", command="printf 'x' > made.txt")
    assert [c.shown for c in agent.timeline().changes] == ["made.txt"]
    assert not marker.exists()
    assert dot_git_hash(ws) == git_before

"""Issue 21, point 6: a nested git repository (a clone inside the workspace) is a gitlink to
the shadow repository, so none of its files is snapshotted. A command that deletes or
changes it must not pass silently: the call, `picobot sessions diff` and `sessions rewind`
(through the real console script) say plainly that those paths were not checkpointed, and
the user's nested `.git` is never touched."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkpoints.conftest import dot_git_hash, git
from tests.headless.conftest import run_cli, session_files
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply


def _clone_with_work(ws: Path) -> Path:
    """vendor/: a repository with a commit, an uncommitted edit and an untracked file."""
    vendor = ws / "vendor"
    vendor.mkdir(parents=True)
    git(vendor, "init", "-q")
    (vendor / "lib.py").write_text("def f():\n    return 1\n")
    git(vendor, "add", "-A")
    git(vendor, "commit", "-q", "-m", "first")
    (vendor / "lib.py").write_text("def f():\n    return 2  # uncommitted work\n")
    (vendor / "notes.txt").write_text("untracked work\n")
    return vendor


def _run(home: Path, server: OpenAITestServer, command: str) -> tuple[str, str]:
    """One turn running `command` through exec; (session key, the agent's stderr)."""
    server.script([tool_call_reply("exec", {"command": command}, id="x1"), text_reply("done")])
    done = run_cli(home, "agent", "-m", "go", "--yes")
    assert done.returncode == 0, done.stderr
    [session] = session_files(home)
    return session.name.removesuffix(".jsonl").replace("_", ":", 1), done.stderr


def _records(home: Path) -> list[dict]:
    [path] = (home / "data" / "checkpoints" / "sessions").iterdir()
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_rm_rf_of_a_nested_clone_is_reported_not_restored(configured_home, llm_server):
    ws = configured_home / "workspace"
    (ws / "a.txt").write_text("alpha\n")
    _clone_with_work(ws)
    key, said = _run(configured_home, llm_server, "rm -rf vendor && echo beta > a.txt")
    assert not (ws / "vendor").exists()
    # The call says so.
    assert "Not checkpointed: vendor" in said and "nested git repository" in said
    skipped = [r for r in _records(configured_home) if r["type"] == "uncheckpointed"]
    assert [(r["call"], r["paths"]) for r in skipped] == [("x1", ["vendor"])]
    # The diff shows a.txt and says vendor is not in it.
    diff = run_cli(configured_home, "sessions", "diff", key)
    assert diff.returncode == 0, diff.stderr
    assert "+beta" in diff.stdout and "vendor" not in diff.stdout
    assert "vendor, not checkpointed (a nested git repository)" in diff.stderr
    assert "not in this diff" in diff.stderr
    # The rewind restores a.txt and says plainly vendor is not back.
    back = run_cli(configured_home, "sessions", "rewind", key, "--to", "1", "--code")
    assert back.returncode == 0, back.stderr
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert "Restored 1 file(s)" in back.stdout and "vendor" not in back.stdout
    assert "vendor, not checkpointed (a nested git repository)" in back.stderr
    assert "is not restored" in back.stderr
    assert not (ws / "vendor").exists()
    session = session_files(configured_home)[0].read_text().splitlines()
    note = json.loads(session[-1])
    assert note["role"] == "system" and "in vendor was not checkpointed" in note["content"]


def test_a_change_inside_a_nested_repo_is_reported(configured_home, llm_server):
    ws = configured_home / "workspace"
    vendor = _clone_with_work(ws)
    # A nested repository under an ignored folder is not the workspace's: no report for it.
    (ws / ".gitignore").write_text("node_modules/\n")
    _clone_with_work(ws / "node_modules" / "pkg")
    user_git = dot_git_hash(vendor)
    key, said = _run(
        configured_home,
        llm_server,
        "echo more >> vendor/lib.py && echo x >> node_modules/pkg/vendor/lib.py",
    )
    [warning] = [line for line in said.splitlines() if line.startswith("warning:")]
    assert "Not checkpointed: vendor " in warning and "node_modules" not in warning
    assert dot_git_hash(vendor) == user_git  # its .git: not one byte changed
    diff = run_cli(configured_home, "sessions", "diff", key)
    assert diff.returncode == 0
    assert "vendor, not checkpointed (a nested git repository)" in diff.stderr
    assert "node_modules" not in diff.stderr
    back = run_cli(configured_home, "sessions", "rewind", key, "--to", "1", "--code")
    assert back.returncode == 0, back.stderr
    assert "Restored" not in back.stdout
    assert "No checkpointed file to restore" in back.stdout
    assert "vendor, not checkpointed (a nested git repository)" in back.stderr
    assert (vendor / "lib.py").read_text().endswith("more\n")  # not silently put back


def test_a_command_that_leaves_the_nested_repo_alone_reports_nothing(configured_home, llm_server):
    ws = configured_home / "workspace"
    _clone_with_work(ws)
    _, said = _run(configured_home, llm_server, "echo hi > out.txt")
    assert "Not checkpointed" not in said
    assert not [r for r in _records(configured_home) if r["type"] == "uncheckpointed"]

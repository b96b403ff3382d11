"""The trust question through the real `picobot agent` in tmux: started in a project folder
with no --workspace, it asks; the answer is stored and not asked again."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from tests.tui.test_tui_e2e import Tmux, tmux  # noqa: F401  (the fixture)

pytestmark = pytest.mark.e2e


def _wait_file(path: Path, limit: float = 30, *, written: bool = False) -> None:
    """Until `path` exists (`written`: and holds something; the shell creates an exit
    file before `echo $?` writes into it)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not (path.exists() and (not written or path.read_text())):
        time.sleep(0.1)
    assert path.exists(), f"{path} never appeared"


def test_the_trust_prompt_in_a_real_terminal(tmux: Tmux, picobot_home, tmp_path):  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("project rules\n")
    (picobot_home / "config.json").write_text(
        json.dumps({"agents": {"defaults": {"model": "demo"}}, "ui": {"bell": "never"}})
    )
    exit_file = tmp_path / "exit-1"
    tmux.start_agent(picobot_home, [], then=f"echo $? > {shlex.quote(str(exit_file))}", cwd=project)
    screen = tmux.wait_for(
        lambda s: "Trust this folder?" in s and "Read-only [n]" in s, "the trust question"
    )
    assert str(project) in screen.replace("\n", "").replace(" ", "").replace("█", "")
    tmux.keys("Enter")  # a stray Enter (the user sending a first message) answers read-only
    tmux.wait_for(lambda s: "is not trusted" in s, "the read-only notice")
    stored = json.loads((picobot_home / "trusted.json").read_text())["workspaces"]
    assert stored == {str(project.resolve()): False}
    tmux.keys("C-q")
    _wait_file(exit_file, written=True)
    assert exit_file.read_text().strip() == "0"

    if tmux.alive():
        tmux.run("kill-session", "-t", tmux.name)
    again = tmp_path / "exit-2"
    tmux.start_agent(picobot_home, [], then=f"echo $? > {shlex.quote(str(again))}", cwd=project)
    screen = tmux.wait_for(lambda s: "is not trusted" in s, "the stored answer applied")
    assert "Trust this folder?" not in screen
    # A lasting mark in the status bar, not only the notice that scrolls away (issue 25,
    # point 9).
    tmux.wait_for(lambda s: "read-only" in s.split("\n", 1)[0], "read-only in the status bar")
    tmux.keys("C-q")
    _wait_file(again, written=True)


def test_an_untrusted_project_runs_none_of_its_hooks(tmux: Tmux, picobot_home, tmp_path):  # noqa: F811
    """A project's .picobot/config.json hooks run only when the folder is trusted; the
    user's own hooks still run (they are the user's). Through the real console script."""
    project = tmp_path / "project"
    (project / ".picobot").mkdir(parents=True)
    theirs, mine = tmp_path / "project-hook-ran", tmp_path / "user-hook-ran"
    hook = {"UserPromptSubmit": [{"hooks": [{"command": f"touch {shlex.quote(str(theirs))}"}]}]}
    hook["SessionStart"] = hook["UserPromptSubmit"]
    (project / ".picobot" / "config.json").write_text(json.dumps({"hooks": hook}))
    user = {"UserPromptSubmit": [{"hooks": [{"command": f"touch {shlex.quote(str(mine))}"}]}]}
    (picobot_home / "config.json").write_text(
        json.dumps(
            {"agents": {"defaults": {"model": "demo"}}, "ui": {"bell": "never"}, "hooks": user}
        )
    )
    exit_file = tmp_path / "exit"
    tmux.start_agent(picobot_home, [], then=f"echo $? > {shlex.quote(str(exit_file))}", cwd=project)
    tmux.wait_for(lambda s: "Trust this folder?" in s, "the trust question")
    tmux.keys("n")
    tmux.wait_for(lambda s: "is not trusted" in s, "the read-only notice")
    tmux.keys("hello", "Enter")
    _wait_file(mine)  # the user's hook ran for this message...
    # "● idle" alone is on screen before the turn starts: wait for the answer's last line too
    # (Ctrl+Q while a turn runs asks first, and the exit file would never appear).
    tmux.wait_for(lambda s: "whole demo" in s and "● idle" in s, "the answer", limit=90)
    assert not theirs.exists()  # ...and the project's never did
    tmux.keys("C-q")
    _wait_file(exit_file, written=True)
    assert exit_file.read_text().strip() == "0"

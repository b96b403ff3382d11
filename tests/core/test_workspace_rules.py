"""`<PICOBOT_HOME>/permissions.json`: the always-allow answers saved for one workspace (issue
21, point 2). Keyed by the resolved path; other workspaces' entries kept as they are; a
damaged file gives no rules and a clear problem, and is never overwritten."""

from __future__ import annotations

import json
import stat

import pytest

from picobot_tui.config.workspace_rules import load_rules, remove_rule, save_rule


def test_rules_are_saved_per_resolved_workspace_and_removed(tmp_path, picobot_home) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (tmp_path / "link").symlink_to(a)
    path = save_rule(a, "tools", "exec(git log:*)")
    assert save_rule(tmp_path / "link", "tools", "exec(git log:*)") == path  # no duplicate
    save_rule(a, "hosts", "docs.example")
    save_rule(b, "tools", "write_file")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "version": 1,
        "workspaces": {
            str(a.resolve()): {"alwaysAllow": ["exec(git log:*)"], "allowHosts": ["docs.example"]},
            str(b.resolve()): {"alwaysAllow": ["write_file"]},
        },
    }
    got = load_rules(tmp_path / "link")
    assert (got.tools, got.hosts, got.problem) == (["exec(git log:*)"], ["docs.example"], "")
    assert load_rules(tmp_path).tools == []  # a parent folder is another workspace
    assert remove_rule(a, "tools", "exec(git log:*)") == path
    assert remove_rule(a, "tools", "exec(git log:*)") is None
    assert load_rules(a).tools == [] and load_rules(b).tools == ["write_file"]


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"{not json", "not valid JSON"),
        (b'["a list"]', "must be a JSON object"),
        (b'{"version": 99, "workspaces": {}}', "version is 99"),
        (b'{"workspaces": {}}', "version is None"),
        (b'{"version": 1, "workspaces": []}', '"workspaces" must be an object'),
        (b'{"version": 1, "workspaces": {"WS": {"alwaysAllow": "exec(ls:*)"}}}', "list of str"),
        (b'{"version": 1, "workspaces": {"WS": {"allowHosts": [5]}}}', "list of strings"),
        (b'{"version": 1, "workspaces": {"WS": 7}}', "must be an object"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_a_damaged_file_gives_no_rules_a_clear_problem_and_is_kept(
    tmp_path, picobot_home, raw, why
) -> None:
    path = picobot_home / "permissions.json"
    path.write_bytes(raw.replace(b"WS", str(tmp_path.resolve()).encode()))
    before = path.read_bytes()
    got = load_rules(tmp_path)
    assert got.tools == [] and got.hosts == []
    assert str(path) in got.problem and why in got.problem
    with pytest.raises(ValueError, match="fix or remove it first"):
        save_rule(tmp_path, "tools", "exec(git status:*)")
    with pytest.raises(ValueError, match="fix or remove it first"):
        remove_rule(tmp_path, "tools", "exec(git status:*)")
    assert path.read_bytes() == before


def test_an_empty_or_missing_file_is_no_rules(tmp_path, picobot_home) -> None:
    assert load_rules(tmp_path).problem == ""
    (picobot_home / "permissions.json").write_text("  \n")
    assert load_rules(tmp_path).problem == "" and load_rules(tmp_path).tools == []


_SAVER = """
import sys
from pathlib import Path
from picobot_tui.config.workspace_rules import save_rule
for i in range(100):
    save_rule(Path(sys.argv[1]), "tools", f"exec(echo {sys.argv[2]}{i})")
"""


def test_two_picobots_saving_at_once_lose_no_rule(tmp_path, picobot_home) -> None:
    """Each save reads the file and writes it back whole: without the lock, two processes
    saving 150 rules each kept 174 of the 300 (measured)."""
    import os
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "PICOBOT_HOME": str(picobot_home)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _SAVER, str(ws), tag], env=env)
        for tag in ("a", "b")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert len(load_rules(ws).tools) == 200


def test_a_save_waiting_on_another_says_so(tmp_path, picobot_home, monkeypatch) -> None:
    import fcntl
    import os

    from picobot_tui.config import workspace_rules

    monkeypatch.setattr(workspace_rules, "LOCK_WAIT", 0.05)
    ws = tmp_path / "ws"
    ws.mkdir()
    path = save_rule(ws, "tools", "write_file")
    fd = os.open(f"{path}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another picobot, stopped mid-save
        with pytest.raises(OSError, match="being changed by another picobot"):
            save_rule(ws, "tools", "exec(ls:*)")
    finally:
        os.close(fd)
    assert load_rules(ws).tools == ["write_file"]
    save_rule(ws, "tools", "exec(ls:*)")  # once it is free
    assert load_rules(ws).tools == ["write_file", "exec(ls:*)"]

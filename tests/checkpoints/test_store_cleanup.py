"""Issue 21, points 10 and 8: through the console script, a deleted session's content leaves
the checkpoints store (the blobs and the shadow git, whose objects are zlib-compressed, so
git itself is asked), and the maxBytes cap never prunes what a live session is using."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

from picobot_tui.core.checkpoints.limits import enforce
from picobot_tui.core.checkpoints.shadow_git import ShadowGit, collect, pin, sessions_in
from picobot_tui.core.checkpoints.store import CheckpointStore, checkpoints_root
from tests.headless.conftest import cli_env, picobot_exe, run_cli, session_files
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply


def _exec(command: str, id: str) -> Any:
    return tool_call_reply("exec", {"command": command}, id=id)


def _run(home: Path, *args: str) -> None:
    done = run_cli(home, "agent", *args, "--yes")
    assert done.returncode == 0, done.stderr


def _key(path: Path) -> str:
    return path.name.removesuffix(".jsonl").replace("_", ":", 1)


def _new_session(home: Path, before: list[Path]) -> str:
    [made] = [p for p in session_files(home) if p not in before]
    return _key(made)


def _write_then_delete_creds(home: Path, server: OpenAITestServer, marker: str) -> str:
    """A session whose exec wrote creds.txt (turn 1) and deleted it (turn 2); its key."""
    before = session_files(home)
    server.script(
        [
            _exec(f"printf '{marker}\\n' > creds.txt", "c1"),
            text_reply("written"),
            _exec("rm creds.txt", "c2"),
            text_reply("deleted"),
        ]
    )
    _run(home, "-m", "write the credentials")
    key = _new_session(home, before)
    _run(home, "-m", "now delete them", "-s", key)
    assert not (home / "workspace" / "creds.txt").exists()
    return key


def _git_objects(repo: Path) -> bytes:
    """Every object of a shadow repository, decompressed."""
    env = cli_env(repo, GIT_DIR=str(repo), GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        env=env,
        capture_output=True,
        check=True,
    )
    return done.stdout


def _repos(root: Path) -> list[Path]:
    git = root / "git"
    return [p for p in git.iterdir() if p.is_dir()] if git.is_dir() else []


def _holding(root: Path, marker: bytes) -> list[str]:
    """Where under the checkpoints root `marker` still is: raw files, then git objects."""
    found = [str(p) for p in root.rglob("*") if p.is_file() and marker in p.read_bytes()]
    found += [f"git objects of {r.name}" for r in _repos(root) if marker in _git_objects(r)]
    return found


def test_deleting_the_only_session_leaves_none_of_its_content(configured_home, llm_server):
    marker = f"CREDS-{uuid.uuid4().hex}"
    key = _write_then_delete_creds(configured_home, llm_server, marker)
    root = checkpoints_root(configured_home)
    assert _holding(root, marker.encode()), "the test must see the content before deleting"
    gone = run_cli(configured_home, "sessions", "delete", key, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert _holding(root, marker.encode()) == []
    assert _repos(root) == []  # no session names the workspace's snapshots: all of it goes


def test_deleting_one_of_two_sessions_keeps_the_others_rewind(configured_home, llm_server):
    marker = f"CREDS-{uuid.uuid4().hex}"
    ws = configured_home / "workspace"
    deleted = _write_then_delete_creds(configured_home, llm_server, marker)
    before = session_files(configured_home)
    llm_server.script([_exec("printf 'v1\\n' > b.txt", "b1"), text_reply("made b")])
    _run(configured_home, "-m", "make b")
    other = _new_session(configured_home, before)
    root = checkpoints_root(configured_home)
    gone = run_cli(configured_home, "sessions", "delete", deleted, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert _holding(root, marker.encode()) == []
    assert len(_repos(root)) == 1  # the other session's snapshots stay
    # The other session still rewinds, and its workspace still snapshots.
    back = run_cli(configured_home, "sessions", "rewind", other, "--to", "1", "--code")
    assert back.returncode == 0, back.stderr
    assert not (ws / "b.txt").exists()
    llm_server.script([_exec("printf 'v2\\n' > b.txt", "b2"), text_reply("again")])
    _run(configured_home, "-m", "again", "-s", other)
    diff = run_cli(configured_home, "sessions", "diff", other, "--turn", "2")
    assert diff.returncode == 0 and "+v2" in diff.stdout, diff.stdout + diff.stderr


class _JsonAgent:
    """`picobot agent --json --yes`: a session held open between turns."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [*picobot_exe(), "agent", "--json", "--yes"],
            cwd=home / "workspace",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(home),
        )

    def turn(self, content: str) -> list[dict[str, Any]]:
        """Send one message; the events up to its `turn_finished`."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"type": "message", "content": content}) + "\n")
        self.proc.stdin.flush()
        events = []
        for line in self.proc.stdout:
            events.append(json.loads(line))
            if events[-1]["type"] == "turn_finished":
                return events
        raise AssertionError(f"the agent ended mid-turn: {self.proc.stderr}")

    def close(self) -> int:
        assert self.proc.stdin
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        assert self.proc.stderr
        self.proc.stderr.close()
        assert self.proc.stdout
        self.proc.stdout.close()
        return code


def test_the_cap_never_prunes_a_live_sessions_repository(configured_home, llm_server, tmp_path):
    ws = configured_home / "workspace"
    # An older session in another workspace, not open anywhere: the cap may take it.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    llm_server.script([_exec("printf 'old\\n' > old.txt", "o1"), text_reply("old")])
    _run(configured_home, "-m", "old work", "--workspace", str(elsewhere))
    [old] = session_files(configured_home)
    llm_server.script(
        [
            _exec("printf 'v1\\n' > a.txt", "a1"),
            text_reply("one"),
            _exec("printf 'v2\\n' > a.txt", "a2"),
            text_reply("two"),
        ]
    )
    agent = _JsonAgent(configured_home)
    try:
        agent.turn("first")
        [live] = [p for p in session_files(configured_home) if p != old]
        # Another picobot's cap, far below what the store holds, while the session is open.
        store = CheckpointStore(checkpoints_root(configured_home))
        pruned = enforce(store, 1)
        repos_left = len(_repos(store.root))
        agent.turn("second")
    finally:
        assert agent.close() == 0
    back = run_cli(configured_home, "sessions", "rewind", _key(live), "--to", "2", "--code")
    assert back.returncode == 0, back.stdout + back.stderr
    assert (ws / "a.txt").read_text() == "v1\n"  # the agent's change undone, nobody blamed
    assert "--force" not in back.stderr
    assert pruned == [_key(old)]  # the cap still prunes what is not in use
    assert repos_left == 1  # the old workspace's repository went; the live one stayed


def test_deleting_a_session_beside_a_live_one_collects_only_its_content(
    configured_home, llm_server
):
    ws = configured_home / "workspace"
    marker = f"CREDS-{uuid.uuid4().hex}"
    deleted = _write_then_delete_creds(configured_home, llm_server, marker)
    llm_server.script(
        [
            _exec("printf 'v1\\n' > a.txt", "a1"),
            text_reply("one"),
            _exec("printf 'v2\\n' > a.txt", "a2"),
            text_reply("two"),
        ]
    )
    root = checkpoints_root(configured_home)
    before = session_files(configured_home)
    agent = _JsonAgent(configured_home)
    try:
        agent.turn("first")
        # The workspace's repository is in use: it stays, but the content goes.
        gone = run_cli(configured_home, "sessions", "delete", deleted, "--yes")
        assert gone.returncode == 0, gone.stderr
        held = _holding(root, marker.encode())
        agent.turn("second")
    finally:
        assert agent.close() == 0
    assert held == []
    live = _new_session(configured_home, [*before])
    back = run_cli(configured_home, "sessions", "rewind", live, "--to", "2", "--code")
    assert back.returncode == 0, back.stdout + back.stderr
    assert (ws / "a.txt").read_text() == "v1\n"


def test_a_snapshot_collected_before_it_is_named_is_refused(tmp_path):
    """The race `Recorder.snapshot` guards against: a deletion's `git gc` between a
    snapshot and its ref. The ref is refused, so the recorder snapshots again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    shadow = ShadowGit(tmp_path / "git", ws, 100)
    first = shadow.snapshot(1 << 20).tree
    (ws / "a.txt").write_text("two\n")
    second = shadow.snapshot(1 << 20).tree  # the index moved on: nothing holds `first` now
    collect(shadow, "gone")
    assert not pin(shadow, "live", first)
    assert pin(shadow, "live", second)
    assert sessions_in(shadow) == {"live"}

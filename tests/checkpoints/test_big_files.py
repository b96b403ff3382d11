"""Issue 21, point 8: the exec snapshot honours `checkpoints.maxFileBytes`. A 2 GB sparse
file next to the workspace's files is never hashed into the shadow repository (`echo hi`
runs as it does without it), and a command that changes it is recorded "not undoable": the
call, `picobot sessions diff` and `sessions rewind` say so (the real console script)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.headless.conftest import run_cli, session_files
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply

BIG = 2 << 30  # 2 GiB, sparse: no disk used, but git add would read and hash all of it


def _big(ws: Path) -> Path:
    path = ws / "disk.img"
    path.touch()
    os.truncate(path, BIG)
    return path


def _run(home: Path, server: OpenAITestServer, command: str) -> tuple[str, str]:
    server.script([tool_call_reply("exec", {"command": command}, id="x1"), text_reply("done")])
    done = run_cli(home, "agent", "-m", "go", "--yes", timeout=300)
    assert done.returncode == 0, done.stderr
    [session] = session_files(home)
    return session.name.removesuffix(".jsonl").replace("_", ":", 1), done.stdout + done.stderr


def _shadow_objects(home: Path) -> tuple[list[int], int]:
    """(the size of every object in the shadow repository, bytes its objects folder holds)."""
    [shadow] = [p for p in (home / "data" / "checkpoints" / "git").iterdir() if p.is_dir()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_DIR"] = str(shadow)
    out = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectsize)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    held = sum(p.stat().st_size for p in (shadow / "objects").rglob("*") if p.is_file())
    return [int(x) for x in out.split()], held


def test_a_big_sparse_file_is_never_hashed_and_echo_still_works(configured_home, llm_server):
    ws = configured_home / "workspace"
    (ws / "a.txt").write_text("alpha\n")
    _big(ws)
    key, said = _run(configured_home, llm_server, "echo hi && echo beta > a.txt")
    assert "hi" in said
    sizes, held = _shadow_objects(configured_home)
    assert sizes and max(sizes) < 1 << 20  # a.txt's blobs and trees, no 2 GiB blob
    assert held < 1 << 20  # git's zlib would still have left ~2 MB of zeros
    assert "Not undoable" not in said  # the big file did not change: nothing to say
    diff = run_cli(configured_home, "sessions", "diff", key)
    assert "+beta" in diff.stdout and "disk.img" not in diff.stdout + diff.stderr


def test_a_change_to_a_big_file_is_not_undoable_and_said_so(configured_home, llm_server):
    ws = configured_home / "workspace"
    (ws / "a.txt").write_text("alpha\n")
    big = _big(ws)
    key, said = _run(configured_home, llm_server, "printf x >> disk.img && echo beta > a.txt")
    assert big.stat().st_size == BIG + 1
    assert "Not undoable: disk.img (2,147,483,648 bytes, over checkpoints.maxFileBytes" in said
    sizes, _ = _shadow_objects(configured_home)
    assert max(sizes) < 1 << 20
    diff = run_cli(configured_home, "sessions", "diff", key)
    assert diff.returncode == 0
    assert "disk.img: not kept (2,147,483,648 bytes, over checkpoints.maxFileBytes" in diff.stderr
    back = run_cli(configured_home, "sessions", "rewind", key, "--to", "1", "--code")
    assert back.returncode == 0, back.stderr
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert "not undoable (not kept): disk.img" in back.stderr
    assert big.stat().st_size == BIG + 1  # left as it is, not "restored"

"""`picobot sessions diff / rewind / branch` through the console script, after real turns
of the scripted model (`picobot agent -m … --yes`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from picobot_tui.core.checkpoints.store import FRESH
from tests.headless.conftest import run_cli, run_on_pty, session_files
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply


def _two_turns(home: Path, server: OpenAITestServer) -> tuple[Path, str]:
    ws = home / "workspace"
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "keep.bin").write_bytes(b"\x00\xff binary")
    server.script(
        [
            tool_call_reply("write_file", {"path": "a.txt", "content": "alpha\nBETA\n"}, id="w1"),
            text_reply("turn one done"),
            tool_call_reply("edit_file", {"path": "a.txt", "old_text": "alpha", "new_text": "A"}),
            tool_call_reply("exec", {"command": "printf 'made\\n' > b.txt && rm keep.bin"}),
            text_reply("turn two done"),
        ]
    )
    first = run_cli(home, "agent", "-m", "first", "--yes")
    assert first.returncode == 0, first.stderr
    second = run_cli(home, "agent", "-m", "second", "-s", "latest", "--yes")
    assert second.returncode == 0, second.stderr
    [session] = session_files(home)
    key = session.name.removesuffix(".jsonl").replace("_", ":", 1)
    return ws, key


def test_diff_then_rewind_over_a_user_edit(configured_home, llm_server, tmp_path):
    original = tmp_path / "original"
    ws = configured_home / "workspace"
    (ws / "a.txt").write_text("alpha\nbeta\n")
    shutil.copytree(ws, original)
    ws, key = _two_turns(configured_home, llm_server)
    shutil.rmtree(original)
    original.mkdir()
    (original / "a.txt").write_text("alpha\nbeta\n")
    (original / "keep.bin").write_bytes(b"\x00\xff binary")
    whole = run_cli(configured_home, "sessions", "diff", key)
    assert whole.returncode == 0, whole.stderr
    assert "\x1b[" not in whole.stdout  # a pipe: plain text
    code, shown, _ = run_on_pty(configured_home, "sessions", "diff", key)
    assert code == 0 and "\x1b[32m+A" in shown and "file(s), +" in shown  # a terminal: colour
    turn2 = run_cli(configured_home, "sessions", "diff", key, "--turn", "2")
    assert "+A\n" in turn2.stdout and "BETA" not in turn2.stdout.replace(" BETA", "")
    text_only = "".join(
        part for part in whole.stdout.split("diff --git") if part and "keep.bin" not in part
    )
    patch_file = tmp_path / "p.diff"
    patch_file.write_text("".join("diff --git" + p for p in text_only.split("diff --git")))
    for tool in (["git", "apply", str(patch_file)], ["patch", "-p1", "-s", "-i", str(patch_file)]):
        target = tmp_path / tool[0]
        shutil.copytree(original, target)
        if shutil.which(tool[0]) is None:
            continue
        subprocess.run(tool, cwd=target, check=True, capture_output=True)
        assert (target / "a.txt").read_text() == (ws / "a.txt").read_text()
        assert (target / "b.txt").read_text() == "made\n"
    bad = run_cli(configured_home, "sessions", "diff", key, "--turn", "9")
    assert bad.returncode == 2 and "no turn 9" in bad.stderr
    # A file the user edited afterwards: listed, nothing restored, unless --force.
    session = session_files(configured_home)[0]
    (ws / "b.txt").write_text("the user's edit\n")
    refused = run_cli(configured_home, "sessions", "rewind", key, "--to", "1", "--code")
    assert refused.returncode == 1
    assert "b.txt" in refused.stderr and "--force" in refused.stderr
    assert (ws / "b.txt").read_text() == "the user's edit\n"
    assert (ws / "a.txt").read_text() == "A\nBETA\n"  # nothing restored
    forced = run_cli(configured_home, "sessions", "rewind", key, "--to", "1", "--code", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"
    assert (ws / "keep.bin").read_bytes() == b"\x00\xff binary"
    assert not (ws / "b.txt").exists()
    lines = [json.loads(x) for x in session.read_text().splitlines()]
    assert lines[-1]["role"] == "system" and "before turn 1" in lines[-1]["content"]


def test_branch_keeps_the_original_complete(configured_home, llm_server):
    ws, key = _two_turns(configured_home, llm_server)
    [original] = session_files(configured_home)
    digest = hashlib.sha256(original.read_bytes()).hexdigest()
    made = run_cli(configured_home, "sessions", "branch", key, "--at", "2")
    assert made.returncode == 0, made.stderr
    new_key = made.stdout.strip()
    assert new_key != key and "second" in made.stderr
    assert hashlib.sha256(original.read_bytes()).hexdigest() == digest
    branch_file = next(p for p in session_files(configured_home) if p != original)
    lines = [json.loads(x) for x in branch_file.read_text().splitlines()]
    assert lines[0]["parent"] == key and lines[0]["forked_at"] == 2
    users = [m["content"] for m in lines if m.get("role") == "user"]
    assert users == ["first"]
    assert (ws / "a.txt").read_text() == "A\nBETA\n"  # files untouched
    listed = run_cli(configured_home, "sessions", "list", "--json")
    assert listed.returncode == 0
    # Code and conversation at once: turn 2 undone, a second branch; that branch rewinds
    # the turn it inherited.
    both = run_cli(configured_home, "sessions", "rewind", key, "--to", "2")
    assert both.returncode == 0, both.stderr
    assert (ws / "a.txt").read_text() == "alpha\nBETA\n"
    assert (ws / "keep.bin").read_bytes() == b"\x00\xff binary"
    second = both.stdout.split("Branch ", 1)[1].split()[0]
    again = run_cli(configured_home, "sessions", "rewind", second, "--to", "1", "--code")
    assert again.returncode == 0, again.stderr
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"
    bad = run_cli(configured_home, "sessions", "branch", key, "--at", "7")
    assert bad.returncode == 2 and "no turn 7" in bad.stderr
    # Deleting a session deletes its checkpoints (the blobs others use stay).
    records = configured_home / "data" / "checkpoints" / "sessions"
    name = key.replace(":", "_", 1) + ".jsonl"
    assert name in [p.name for p in records.iterdir()]
    blobs = configured_home / "data" / "checkpoints" / "blobs"
    past = time.time() - 2 * FRESH  # a while after their last use (a sweep spares fresh ones)
    for path in blobs.rglob("*"):
        os.utime(path, (past, past))
    before = {p.name for p in blobs.rglob("*") if p.is_file()}
    gone = run_cli(configured_home, "sessions", "delete", key, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert name not in [p.name for p in records.iterdir()]
    after = {p.name for p in blobs.rglob("*") if p.is_file()}
    assert after < before  # the deleted session's own states went with it; branches' stay
    # The first branch still rewinds the turn it took from the deleted session.
    (ws / "a.txt").write_text("alpha\nBETA\n")  # as that turn left it
    last = run_cli(configured_home, "sessions", "rewind", new_key, "--to", "1", "--code")
    assert last.returncode == 0, last.stderr
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"

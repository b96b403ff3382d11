"""Helpers of the link-attack tests: a session run by the real `picobot` process, and what
a folder tree holds (to prove nothing outside the workspace appeared, changed or went)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from tests.headless.conftest import run_cli, session_files
from tests.support.openai_server import OpenAITestServer
from tests.support.openai_steps import text_reply, tool_call_reply


def tree(root: Path) -> dict[str, str]:
    """Every entry under `root` (folders too): kind, mode and a hash of the bytes or the
    link target. Links are never followed."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            st = os.lstat(path)
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link " + os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = f"dir {stat.S_IMODE(st.st_mode):o}"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = f"file {stat.S_IMODE(st.st_mode):o} {digest}"
    return out


def run_turn(home: Path, server: OpenAITestServer, steps: list[Any], first: bool) -> str:
    """One turn of the scripted model through `picobot agent --yes`; the session key."""
    server.script([*steps, text_reply("done")])
    args = ["agent", "-m", "go", "--yes"] if first else ["agent", "-m", "again", "-s", "latest"]
    done = run_cli(home, *args, *([] if first else ["--yes"]))
    assert done.returncode == 0, done.stderr
    [session] = session_files(home)
    return session.name.removesuffix(".jsonl").replace("_", ":", 1)


def write(path: str, content: str, id: str) -> Any:
    return tool_call_reply("write_file", {"path": path, "content": content}, id=id)


def exec_(command: str, id: str) -> Any:
    return tool_call_reply("exec", {"command": command}, id=id)


def rewind(home: Path, key: str, *flags: str) -> Any:
    return run_cli(home, "sessions", "rewind", key, "--to", "1", "--code", *flags)

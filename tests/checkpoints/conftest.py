"""Workspaces of issue 14 and helpers: real files, real git, the real tools and the hook."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.core.checkpoints.hook import run_checkpointed
from picobot_tui.core.checkpoints.store import CheckpointStore, checkpoints_root
from picobot_tui.core.checkpoints.timeline import Timeline, load_timeline
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.tools.base import ToolContext, ToolResult
from picobot_tui.core.tools.registry import ToolRegistry, default_registry
from tests.headless.conftest import (  # noqa: F401 (fixtures of the console-script tests)
    configured_home,
    llm_server,
    server,
)

KEY = "cli:c0ffee00-20260101-000000"
KINDS = ("plain", "git", "ignored", "binary", "symlink")


def git(ws: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@x",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@x",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(ws.parent),
    )
    done = subprocess.run(["git", *args], cwd=ws, env=env, capture_output=True, check=True)
    return done.stdout.decode()


def make_workspace(ws: Path, kind: str) -> None:
    """One of the issue's five workspaces, with a few files of its kind."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def main():\n    return 1\n")
    (ws / "README.md").write_text("# readme\n")
    os.chmod(ws / "README.md", 0o640)
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(ws / "run.sh", 0o755)
    if kind in ("git", "ignored"):
        git(ws, "init", "-q")
        if kind == "ignored":
            (ws / ".gitignore").write_text("build/\n*.o\n")
            (ws / "build").mkdir()
            (ws / "build" / "old.o").write_bytes(b"\x7fELF old")
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "first")
        # Uncommitted and staged user changes.
        (ws / "README.md").write_text("# readme\nuncommitted line\n")
        (ws / "staged.txt").write_text("staged\n")
        git(ws, "add", "staged.txt")
    if kind == "binary":
        (ws / "blob.bin").write_bytes(bytes(range(256)) * 4)
        (ws / "latin1.txt").write_bytes("café crème\n".encode("latin-1"))
    if kind == "symlink":
        outside = ws.parent / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("outside\n")
        os.symlink(outside / "secret.txt", ws / "link-out")
        os.symlink("src/app.py", ws / "link-in")


def tree_state(ws: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under `ws` but .git: (kind, permission bits, bytes or link target)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = Path(folder) / name
            rel = str(path.relative_to(ws))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.fsencode(os.readlink(path)))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return out


def dot_git_hash(ws: Path) -> dict[str, str]:
    """A hash of every file under the user's .git (HEAD, index, refs, objects...)."""
    out = {}
    root = ws / ".git"
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


class Agent:
    """The real tools behind the checkpoint hook, as the tool step calls them."""

    def __init__(self, ws: Path, settings: CoreSettings | None = None, key: str = KEY) -> None:
        self.ws = ws
        self.settings = settings or CoreSettings()
        self.settings.agents.defaults.workspace = str(ws)
        self.key = key
        self.registry: ToolRegistry = default_registry(
            ToolContext(workspace=ws, config=self.settings.tools)
        )
        self.notes: list[str] = []
        self._n = 0

    def call(self, turn: int, name: str, **args: Any) -> ToolResult:
        self._n += 1
        result, note = asyncio.run(
            run_checkpointed(
                self.registry,
                name,
                args,
                settings=self.settings,
                session=self.key,
                turn=turn,
                call_id=f"call_{self._n}",
            )
        )
        if note:
            self.notes.append(note)
        assert result.ok, result.content
        return result

    @property
    def store(self) -> CheckpointStore:
        return CheckpointStore(checkpoints_root(self.settings.home))

    def timeline(self) -> Timeline:
        return load_timeline(self.store, self.key)


@pytest.fixture(params=KINDS)
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    ws = tmp_path / "ws"
    make_workspace(ws, request.param)
    return request.param, ws

"""Instruction files found as a monorepo lays them out (core/instructions.py): from the git
root down to the workspace in the prompt, outermost first; the ones below the workspace
with the first file tool result that reaches their folder, once per session; confined,
capped and scrubbed; none for an untrusted workspace."""

from __future__ import annotations

import logging
import re
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from picobot_tui.core.context import ContextBuilder
from picobot_tui.core.instructions import MARK, repo_root
from picobot_tui.core.secrets import Scrubber

SECRET = "sk-instructions-0123456789abcdef"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git monorepo: a root AGENTS.md; apps/web with AGENTS.md and CLAUDE.md; apps/api
    with only CLAUDE.md; apps/api/src/handlers with its own AGENTS.md; a file and a folder
    in apps/web that link out of the repository."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("OUTSIDE rules\n")
    (outside / "secret.txt").write_text("OUTSIDE secret\n")
    files = {
        "AGENTS.md": "ROOT rules\n",
        "apps/web/AGENTS.md": "WEB rules\n",
        "apps/web/CLAUDE.md": "WEB-CLAUDE rules\n",
        "apps/web/page.ts": "export {}\n",
        "apps/api/CLAUDE.md": f"API rules (key {SECRET})\n",
        "apps/api/src/main.py": "print('hi')\n",
        "apps/api/src/handlers/AGENTS.md": "HANDLERS rules\n",
        "apps/api/src/handlers/users.py": "pass\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "apps/web/linked").symlink_to(outside, target_is_directory=True)
    (root / "apps/web/evil").mkdir()
    (root / "apps/web/evil/AGENTS.md").symlink_to(outside / "secret.txt")
    return root


def builder(ws: Path) -> ContextBuilder:
    return ContextBuilder(ws, now=lambda: datetime(2026, 1, 2), scrub=Scrubber([SECRET]))


def rules(text: str) -> list[str]:
    """The instruction texts in `text`, in order (each fixture file's text is `NAME rules`)."""
    return re.findall(r"^([A-Z][A-Z-]+) rules", text, re.M)


@pytest.mark.parametrize(
    ("workspace", "prompt", "reads"),
    [
        # the repository root: its own file; each package's with the first read under it
        (
            ".",
            ["ROOT"],
            [
                ("apps/api/src/main.py", ["API"]),
                ("apps/api/src/handlers/users.py", ["HANDLERS"]),
                ("apps/api/src/handlers/users.py", []),  # once per session
                ("apps/web/page.ts", ["WEB"]),  # AGENTS.md wins over CLAUDE.md
            ],
        ),
        # a package with only CLAUDE.md: the root's, then its own
        ("apps/api", ["ROOT", "API"], [("src/handlers/users.py", ["HANDLERS"])]),
        # two levels down, skipping folders that have none
        ("apps/api/src/handlers", ["ROOT", "API", "HANDLERS"], [("users.py", [])]),
        # AGENTS.md and CLAUDE.md side by side: AGENTS.md only; links out give nothing
        ("apps/web", ["ROOT", "WEB"], [("linked/AGENTS.md", []), ("evil/AGENTS.md", [])]),
        # a folder inside the repository with none of its own
        ("apps", ["ROOT"], [("api/src/main.py", ["API"]), ("web", ["WEB"])]),
    ],
)
def test_the_instruction_set_and_order(
    repo: Path, workspace: str, prompt: list[str], reads: list[tuple[str, list[str]]]
) -> None:
    ws = repo / workspace
    ctx = builder(ws)
    before = ctx.build()
    assert rules(before) == prompt
    nested = ctx.nested("s1", [])
    assert nested is not None
    for path, expected in reads:
        target = ws / path
        got = nested.for_path(target, is_dir=target.is_dir())
        assert rules(got) == expected, (path, got)
        assert "OUTSIDE" not in got
    # the prompt (the cached prefix) is byte-identical after the nested files were handed out
    assert ctx.build() == before


def test_the_files_are_scrubbed_and_say_where_they_come_from(repo: Path) -> None:
    ctx = builder(repo / "apps/api/src/handlers")
    prompt = ctx.build()
    assert SECRET not in prompt and "API rules" in prompt
    assert "# CLAUDE.md (from the repository: apps/api/CLAUDE.md)" in prompt
    assert "# AGENTS.md (from the repository: AGENTS.md)" in prompt
    assert "\n# AGENTS.md\nHANDLERS rules" in prompt  # the workspace's own, as before
    nested = builder(repo).nested("s", [])
    assert nested is not None
    got = nested.for_path(repo / "apps/api/src/main.py")
    assert SECRET not in got
    assert got.startswith(MARK.format(where="apps/api/", path="apps/api/CLAUDE.md"))


def test_links_out_of_the_workspace_are_left_out_and_said(
    repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ctx = builder(repo / "apps/web")
    nested = ctx.nested("s", [])
    assert nested is not None
    with caplog.at_level(logging.WARNING, logger="picobot.context"):
        assert nested.for_path(repo / "apps/web/evil/page.ts") == ""
    assert "OUTSIDE" not in nested.for_path(repo / "apps/web/linked", is_dir=True)
    assert "evil/AGENTS.md left out of a tool result's instructions: it links outside" in (
        caplog.text
    )


def test_an_ancestor_file_linking_out_of_the_repository_is_left_out(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "AGENTS.md").unlink()
    (repo / "AGENTS.md").symlink_to(tmp_path / "outside" / "secret.txt")
    ctx = builder(repo / "apps/api")
    prompt = ctx.build()
    assert "OUTSIDE" not in prompt and rules(prompt) == ["API"]
    assert "AGENTS.md" in ctx.skipped


def test_an_untrusted_workspace_reads_none(repo: Path) -> None:
    ctx = builder(repo / "apps/api")
    ctx.workspace_files = False
    assert rules(ctx.build()) == []
    assert ctx.nested("s", []) is None


def test_a_resumed_session_does_not_get_a_file_twice(repo: Path) -> None:
    first = builder(repo).nested("s", [])
    assert first is not None
    handed = first.for_path(repo / "apps/api/src/main.py")
    history = [{"role": "tool", "content": "print('hi')\n\n" + handed}]
    again = builder(repo).nested("s", history)
    assert again is not None
    assert again.for_path(repo / "apps/api/src/main.py") == ""
    assert rules(again.for_path(repo / "apps/api/src/handlers/users.py")) == ["HANDLERS"]


def test_the_root_is_found_from_a_worktree_and_without_git(repo: Path, tmp_path: Path) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit",
         "-q", "--allow-empty", "-m", "init"],
        check=True,
    )  # fmt: skip
    tree = tmp_path / "tree"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(tree)], check=True)
    assert (tree / ".git").is_file()  # a worktree's .git is a file
    (tree / "pkg").mkdir()
    assert repo_root(tree / "pkg") == tree.resolve()
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert repo_root(plain) == plain.resolve()

"""The user's own templates and skills (~/.picobot) merged with the project's, in the
documented order, under the same confinement; an untrusted workspace gives only the user's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from picobot_tui.core.context import ContextBuilder


def builder(ws: Path, user: Path) -> ContextBuilder:
    return ContextBuilder(ws, user_dir=user, now=lambda: datetime(2025, 1, 2, 3, 4, tzinfo=UTC))


def layout(tmp_path: Path) -> tuple[Path, Path]:
    user, ws = tmp_path / "picobot-home", tmp_path / "project"
    for d in (user / "skills" / "mine", user / "skills" / "both", ws / "skills" / "both"):
        d.mkdir(parents=True)
    (user / "SOUL.md").write_text("USER-SOUL")
    (user / "AGENTS.md").write_text("USER-AGENTS")
    (user / "skills" / "mine" / "SKILL.md").write_text(
        "---\nname: mine\ndescription: d\n---\nUSER-SKILL-BODY"
    )
    (user / "skills" / "both" / "SKILL.md").write_text("---\nname: both\n---\nUSER-BOTH")
    (ws / "AGENTS.md").write_text("PROJECT-AGENTS")
    (ws / "TODO.md").write_text("PROJECT-TODO")
    (ws / "skills" / "both" / "SKILL.md").write_text(
        "---\nname: both\ndescription: the project's\n---\nPROJECT-BOTH"
    )
    return user, ws


def test_user_templates_come_first_then_the_projects(tmp_path: Path) -> None:
    user, ws = layout(tmp_path)
    prompt = builder(ws, user).build()
    order = ["USER-AGENTS", "USER-SOUL", "PROJECT-AGENTS", "PROJECT-TODO", "- mine: d"]
    assert [prompt.index(m) for m in order] == sorted(prompt.index(m) for m in order)
    assert "USER-SKILL-BODY" not in prompt  # listed: the model loads it with `skill`
    assert "- both: the project's" in prompt  # the project's replaces the user's namesake


def test_an_untrusted_workspace_gives_only_the_users_files(tmp_path: Path) -> None:
    user, ws = layout(tmp_path)
    b = builder(ws, user)
    b.workspace_files = False
    prompt = b.build()
    assert "USER-AGENTS" in prompt and "- mine: d" in prompt and "- both: \n" in prompt + "\n"
    assert "PROJECT-" not in prompt and "not trusted" in prompt


def test_user_files_are_confined_and_never_picobots_own(tmp_path: Path) -> None:
    user, ws = layout(tmp_path)
    (user / "config.json").write_text('{"providers": {"openai": {"apiKey": "CONFIG-KEY"}}}')
    (user / "sessions").mkdir()
    (user / "sessions" / "cli_x.jsonl").write_text("SESSION-TEXT")
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-TEXT")
    (user / "USER.md").symlink_to(user / "config.json")
    (user / "TOOLS.md").symlink_to(outside)
    (user / "skills" / "mine" / "SKILL.md").unlink()
    (user / "skills" / "mine" / "SKILL.md").symlink_to(user / "sessions" / "cli_x.jsonl")
    (ws / "SOUL.md").symlink_to(user / "config.json")  # the project's reader refuses it too
    b = builder(ws, user)
    prompt = b.build()
    for leaked in ("CONFIG-KEY", "OUTSIDE-TEXT", "SESSION-TEXT"):
        assert leaked not in prompt
    assert "picobot's own files" in b.skipped[f"{user}/USER.md"]
    assert "outside the workspace" in b.skipped[f"{user}/TOOLS.md"]
    assert "picobot's own files" in b.skipped[f"{user}/skills/mine/SKILL.md"]
    assert "outside the workspace" in b.skipped["SOUL.md"]


def test_a_workspace_that_is_the_user_dir_reads_its_files_once(tmp_path: Path) -> None:
    user, _ = layout(tmp_path)
    prompt = builder(user, user).build()
    assert prompt.count("USER-AGENTS") == 1

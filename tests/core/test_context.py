"""The system prompt's sections."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from pathlib import Path

import pytest

from picobot_tui.core.context import (
    KB_MAX_CHARS,
    TEMPLATE_MAX_CHARS,
    ContextBuilder,
    parse_frontmatter,
)
from picobot_tui.core.secrets import Scrubber


def build(ws: Path) -> str:
    return ContextBuilder(
        ws, tool_names=["read_file", "todo"], now=lambda: datetime(2026, 1, 2, 3, 4)
    ).build()


def test_sections_present(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always write tests.")
    (tmp_path / "USER.md").write_text("The user is Ada.")
    (tmp_path / "TODO.md").write_text("- [ ] ship it")
    prompt = build(tmp_path)
    assert "# Identity" in prompt
    assert "# Date\n2026-01-02 (Friday)" in prompt
    assert "03:04" not in prompt  # the time goes with the message (core/time_line.py)
    assert str(tmp_path) in prompt
    assert "Always write tests." in prompt and "The user is Ada." in prompt
    assert "SOUL.md" not in prompt  # optional templates are skipped
    assert "- [ ] ship it" in prompt
    assert "read_file, todo" in prompt


def test_kb_included_up_to_cap_and_rest_listed(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("alpha note")
    (kb / "b.md").write_text("b" * KB_MAX_CHARS)
    prompt = build(tmp_path)
    assert "alpha note" in prompt
    assert "kb/b.md" in prompt and "b" * 100 not in prompt


def test_skills_always_whole_others_summarised(tmp_path: Path) -> None:
    for name, always in (("deploy", "true"), ("review", "false")):
        d = tmp_path / "skills" / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: how to {name}\nalways: {always}\n---\nBODY-{name}\n"
        )
    prompt = build(tmp_path)
    assert "BODY-deploy" in prompt
    assert "BODY-review" not in prompt
    assert "- review: how to review" in prompt and "`skill` tool" in prompt


def test_frontmatter_without_closing_fence_is_body() -> None:
    meta, body = parse_frontmatter("---\nname: x\nno end")
    assert meta == {} and body.startswith("---")


# -- confinement: links out, special files, secrets -------------------------------------------

KEY = "sk-ctx-SECRET-0a1b2c3d4e5f67788"


def builder(ws: Path) -> ContextBuilder:
    return ContextBuilder(
        ws, now=lambda: datetime(2026, 1, 2, 3, 4), scrub=Scrubber([KEY], include_env=False)
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "id_rsa").write_text(f"-----BEGIN PRIVATE KEY----- OUTSIDE-CONTENT {KEY}\n")
    (out / "notes").mkdir()
    (out / "notes" / "n.md").write_text("OUTSIDE-NOTE")
    (out / "skill").mkdir()
    (out / "skill" / "SKILL.md").write_text("---\nname: evil\nalways: true\n---\nOUTSIDE-SKILL")
    return out


def test_links_out_of_the_workspace_are_left_out_and_noticed_once(
    tmp_path: Path, outside: Path, caplog
) -> None:
    ws = tmp_path / "ws"
    (ws / "kb").mkdir(parents=True)
    (ws / "skills").mkdir()
    (ws / "AGENTS.md").symlink_to("/proc/self/environ")
    (ws / "USER.md").symlink_to(outside / "id_rsa")
    (ws / "TODO.md").symlink_to(outside / "id_rsa")
    (ws / "kb" / "x.md").symlink_to(outside / "id_rsa")
    (ws / "kb" / "sub").symlink_to(outside / "notes")
    (ws / "skills" / "s").symlink_to(outside / "skill")
    (ws / "SOUL.md").write_text("inside soul")
    b = builder(ws)
    with caplog.at_level(logging.WARNING, logger="picobot.context"):
        prompt = b.build()
        b.build()
    assert "inside soul" in prompt
    for marker in ("OUTSIDE", "PATH=", KEY, "evil"):
        assert marker not in prompt, marker
    expected = {"AGENTS.md", "USER.md", "TODO.md", "kb/x.md", "kb/sub", "skills/s/SKILL.md"}
    assert set(b.skipped) == expected
    assert all("outside the workspace" in why for why in b.skipped.values())
    notices = b.notices("s1")
    assert {n.message.split(" ", 1)[0] for n in notices} == expected
    assert all(n.type == "notice" and "left out of the system prompt" in n.message for n in notices)
    assert b.notices("s1") == []  # once per session, not per turn
    assert len(b.notices("s2")) == len(expected)  # another session is told too
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == len(expected)  # two builds, one warning per file


def test_a_symlinked_kb_or_skills_folder_pointing_out_is_not_walked(
    tmp_path: Path, outside: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kb").symlink_to(outside / "notes")
    (ws / "skills").symlink_to(outside)
    b = builder(ws)
    prompt = b.build()
    assert "OUTSIDE" not in prompt and "evil" not in prompt
    assert set(b.skipped) == {"kb", "skills"}


def test_links_inside_the_workspace_still_work(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "agents.md").write_text("INSIDE-AGENTS")
    (ws / "AGENTS.md").symlink_to("docs/agents.md")
    (ws / "kb").symlink_to("docs")
    b = builder(ws)
    prompt = b.build()
    assert "# AGENTS.md\nINSIDE-AGENTS" in prompt and "## kb/agents.md" in prompt
    assert b.skipped == {}


def test_a_fifo_does_not_hang_the_build_and_is_noticed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "AGENTS.md")
    (ws / "kb").mkdir()
    os.mkfifo(ws / "kb" / "pipe.md")
    (ws / "USER.md").symlink_to("missing.md")
    b = builder(ws)
    b.build()  # would block forever on a plain open()
    assert "FIFO" in b.skipped["AGENTS.md"] and "FIFO" in b.skipped["kb/pipe.md"]
    assert "broken symbolic link" in b.skipped["USER.md"]


def test_context_files_are_scrubbed_before_they_are_cut(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for at in range(TEMPLATE_MAX_CHARS - len(KEY) - 1, TEMPLATE_MAX_CHARS + 2):
        (ws / "AGENTS.md").write_text("." * at + KEY + "." * 50)
        prompt = builder(ws).build()
        section = prompt.split("# AGENTS.md\n", 1)[1]
        assert "truncated" in section
        for i in range(len(KEY) - 3):
            assert KEY[i : i + 4] not in section.replace("[REDACTED]", "\0"), (at, i)
    (ws / "AGENTS.md").write_text(f"use {KEY} here")
    assert "use [REDACTED] here" in builder(ws).build()


def test_environment_secrets_are_scrubbed_by_default(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SOME_API_KEY", "env-SECRET-value-123456")
    (tmp_path / "USER.md").write_text("key env-SECRET-value-123456")
    prompt = ContextBuilder(tmp_path).build()
    assert "env-SECRET" not in prompt and "key [REDACTED]" in prompt

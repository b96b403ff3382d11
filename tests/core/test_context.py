"""The system prompt's sections."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from picobot_tui.core.context import KB_MAX_CHARS, ContextBuilder, parse_frontmatter


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
    assert "2026-01-02 03:04" in prompt
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
    assert "review: how to review (skills/review/SKILL.md)" in prompt


def test_frontmatter_without_closing_fence_is_body() -> None:
    meta, body = parse_frontmatter("---\nname: x\nno end")
    assert meta == {} and body.startswith("---")

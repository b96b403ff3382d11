"""The system prompt: identity, time, workspace, templates, KB notes, TODO list and skills."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

TEMPLATE_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
KB_MAX_CHARS = 12_000
TEMPLATE_MAX_CHARS = 8_000
TODO_MAX_CHARS = 4_000

IDENTITY = (
    "You are picobot, a capable assistant working in the user's terminal. You can read and "
    "change files in the workspace and run commands there through your tools. Think step by "
    "step, use tools when they help, and answer in concise Markdown."
)


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    always: bool
    path: Path
    body: str


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Split `---`-fenced `key: value` frontmatter from a document.

    Hand-written on purpose: SKILL.md frontmatter is flat key/value pairs, and a YAML
    dependency for three keys is not worth its import time.
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines()
    meta: dict[str, str] = {}
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            return meta, "\n".join(lines[i + 1 :]).lstrip("\n")
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return {}, text


def _read(path: Path, limit: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) > limit:
        return text[:limit] + f"\n… [truncated: {len(text) - limit} more chars; read {path}]"
    return text


def load_skills(workspace: Path) -> list[Skill]:
    skills = []
    root = workspace / "skills"
    if not root.is_dir():
        return skills
    for skill_md in sorted(root.glob("*/SKILL.md")):
        meta, body = parse_frontmatter(_read(skill_md, 50_000))
        skills.append(
            Skill(
                name=meta.get("name") or skill_md.parent.name,
                description=meta.get("description", ""),
                always=meta.get("always", "").lower() in {"true", "yes", "1"},
                path=skill_md,
                body=body,
            )
        )
    return skills


class ContextBuilder:
    """Builds the system prompt from the workspace, fresh each turn."""

    def __init__(
        self,
        workspace: Path,
        *,
        tool_names: list[str] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
    ) -> None:
        self.workspace = workspace
        self.tool_names = tool_names or []
        self.now = now

    def build(self) -> str:
        ws = self.workspace
        parts = [f"# Identity\n{IDENTITY}"]
        parts.append(f"# Time\n{self.now().strftime('%Y-%m-%d %H:%M %Z (%A)')}")
        ws_text = f"# Workspace\nYour workspace is {ws}. Relative paths resolve there."
        if self.tool_names:
            ws_text += f"\nTools: {', '.join(self.tool_names)}."
        parts.append(ws_text)
        for name in TEMPLATE_FILES:
            path = ws / name
            if path.is_file():
                parts.append(f"# {name}\n{_read(path, TEMPLATE_MAX_CHARS).strip()}")
        kb = self._kb()
        if kb:
            parts.append(kb)
        todo = ws / "TODO.md"
        if todo.is_file():
            parts.append(
                "# TODO\nYour checklist (update it with the `todo` tool):\n"
                + _read(todo, TODO_MAX_CHARS).strip()
            )
        skills = self._skills()
        if skills:
            parts.append(skills)
        return "\n\n".join(parts)

    def _kb(self) -> str:
        root = self.workspace / "kb"
        if not root.is_dir():
            return ""
        notes = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in {".md", ".txt"})
        if not notes:
            return ""
        included, listed, used = [], [], 0
        for note in notes:
            text = _read(note, KB_MAX_CHARS)
            rel = note.relative_to(self.workspace)
            if used + len(text) <= KB_MAX_CHARS:
                included.append(f"## {rel}\n{text.strip()}")
                used += len(text)
            else:
                listed.append(f"- {rel} ({note.stat().st_size} bytes)")
        out = "# Knowledge base\n" + "\n\n".join(included)
        if listed:
            out += "\n\nMore notes (read them with read_file when relevant):\n" + "\n".join(listed)
        return out

    def _skills(self) -> str:
        skills = load_skills(self.workspace)
        if not skills:
            return ""
        always = [s for s in skills if s.always]
        other = [s for s in skills if not s.always]
        out = ["# Skills"]
        for s in always:
            out.append(f"## Skill: {s.name}\n{s.body.strip()}")
        if other:
            out.append("Available skills (read the SKILL.md with read_file before using one):")
            out.extend(
                f"- {s.name}: {s.description} ({s.path.relative_to(self.workspace)})" for s in other
            )
        return "\n".join(out)

"""The system prompt: identity, time, workspace, templates, KB notes, TODO list and skills.

Every workspace file is read through `ConfinedReader` (context_files.py): confined to the
workspace, never blocking, scrubbed, capped. A file left out is logged once and reported
once per session as a `Notice` event (the loop yields `notices(session_key)`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from picobot_tui.core.context_files import ConfinedReader
from picobot_tui.core.events import Notice
from picobot_tui.core.secrets import Scrubber

log = logging.getLogger("picobot.context")

TEMPLATE_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
KB_MAX_CHARS = 12_000
TEMPLATE_MAX_CHARS = 8_000
TODO_MAX_CHARS = 4_000
SKILL_MAX_CHARS = 50_000

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


def load_skills(workspace: Path, reader: ConfinedReader | None = None) -> list[Skill]:
    reader = reader or ConfinedReader(workspace, Scrubber())
    skills: list[Skill] = []
    root = workspace / "skills"
    if reader.inside(root) is None or not root.is_dir():
        return skills
    for skill_md in sorted(root.glob("*/SKILL.md")):
        read = reader.read(skill_md, SKILL_MAX_CHARS)
        if read is None:
            continue
        meta, body = parse_frontmatter(read[0])
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
        scrub: Scrubber | None = None,
    ) -> None:
        self.workspace = workspace
        self.tool_names = tool_names or []
        self.now = now
        self.scrub = scrub if scrub is not None else Scrubber()
        self.skipped: dict[str, str] = {}
        """What the last build left out: workspace-relative name -> why."""
        self._logged: set[tuple[str, str]] = set()
        self._noticed: dict[str, set[tuple[str, str]]] = {}

    def notices(self, session_key: str) -> list[Notice]:
        """A Notice for each file the last build left out, once per file per session."""
        seen = self._noticed.setdefault(session_key, set())
        out = []
        for name, why in self.skipped.items():
            if (name, why) not in seen:
                seen.add((name, why))
                out.append(
                    Notice("context", f"{name} was left out of the system prompt: it {why}.")
                )
        return out

    def build(self) -> str:
        reader = ConfinedReader(self.workspace, self.scrub)
        try:
            return self._build(reader)
        finally:
            self.skipped = reader.skipped
            for name, why in reader.skipped.items():
                if (name, why) not in self._logged:
                    self._logged.add((name, why))
                    log.warning("%s left out of the system prompt: it %s", name, why)

    def _build(self, reader: ConfinedReader) -> str:
        ws = self.workspace
        parts = [f"# Identity\n{IDENTITY}"]
        parts.append(f"# Time\n{self.now().strftime('%Y-%m-%d %H:%M %Z (%A)')}")
        ws_text = f"# Workspace\nYour workspace is {ws}. Relative paths resolve there."
        if self.tool_names:
            ws_text += f"\nTools: {', '.join(self.tool_names)}."
        parts.append(ws_text)
        for name in TEMPLATE_FILES:
            read = reader.read(ws / name, TEMPLATE_MAX_CHARS)
            if read is not None:
                parts.append(f"# {name}\n{read[0].strip()}")
        kb = self._kb(reader)
        if kb:
            parts.append(kb)
        todo = reader.read(ws / "TODO.md", TODO_MAX_CHARS)
        if todo is not None:
            parts.append(
                "# TODO\nYour checklist (update it with the `todo` tool):\n" + todo[0].strip()
            )
        skills = self._skills(reader)
        if skills:
            parts.append(skills)
        return "\n\n".join(parts)

    def _kb(self, reader: ConfinedReader) -> str:
        notes = reader.notes(self.workspace / "kb", {".md", ".txt"})
        included, listed, used = [], [], 0
        for note in notes:
            read = reader.read(note, KB_MAX_CHARS)
            if read is None:
                continue
            text, size = read
            rel = note.relative_to(self.workspace)
            if used + len(text) <= KB_MAX_CHARS:
                included.append(f"## {rel}\n{text.strip()}")
                used += len(text)
            else:
                listed.append(f"- {rel} ({size} bytes)")
        if not included and not listed:
            return ""
        out = "# Knowledge base\n" + "\n\n".join(included)
        if listed:
            out += "\n\nMore notes (read them with read_file when relevant):\n" + "\n".join(listed)
        return out

    def _skills(self, reader: ConfinedReader) -> str:
        skills = load_skills(self.workspace, reader)
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

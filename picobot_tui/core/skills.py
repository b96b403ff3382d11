"""Skills in the Agent Skills layout: a folder with a `SKILL.md` whose front matter gives
`name`, `description` and optionally `disable-model-invocation` (and picobot's `always`).

Found in the project's `skills/`, `.agents/skills/` and `.claude/skills/` (the folders
other agents use; the first one holding a name wins) and the user's `~/.picobot/skills/`;
a project skill replaces the user's of the same name. Only the names and descriptions go
into the prompt (an `always: true` skill goes in whole); the model loads one with the
`skill` tool (core/tools/skill.py), whose result is the body. A skill with
`disable-model-invocation: true` is neither listed nor loadable by the model: only the
user runs it, with `/name args`. Every SKILL.md is read through the folder's
`ConfinedReader` (by resolved path, scrubbed, capped).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from picobot_tui.core.context_files import ConfinedReader
from picobot_tui.core.secrets import Scrubber

SKILL_MAX_CHARS = 50_000
PROJECT_FOLDERS = ("skills", ".agents/skills", ".claude/skills")
USER_FOLDERS = ("skills",)
_TRUE = {"true", "yes", "1"}


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    always: bool
    path: Path
    body: str
    model_invocable: bool = True
    """False: `disable-model-invocation: true` (only the user runs it)."""


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


def load_skills(
    workspace: Path,
    reader: ConfinedReader | None = None,
    folders: tuple[str, ...] = PROJECT_FOLDERS,
) -> list[Skill]:
    """The skills under `workspace`'s `folders`, by name (the first folder with a name wins),
    sorted by name."""
    reader = reader or ConfinedReader(workspace, Scrubber())
    found: dict[str, Skill] = {}
    for folder in folders:
        root = workspace / folder
        if reader.inside(root) is None or not root.is_dir():
            continue
        for skill_md in sorted(root.glob("*/SKILL.md")):
            read = reader.read(skill_md, SKILL_MAX_CHARS)
            if read is None:
                continue
            meta, body = parse_frontmatter(read[0])
            name = meta.get("name") or skill_md.parent.name
            if name in found:
                continue
            found[name] = Skill(
                name=name,
                description=meta.get("description", ""),
                always=meta.get("always", "").lower() in _TRUE,
                path=skill_md,
                body=body,
                model_invocable=meta.get("disable-model-invocation", "").lower() not in _TRUE,
            )
    return [found[n] for n in sorted(found)]


def merged(user: list[Skill], project: list[Skill]) -> list[Skill]:
    """The user's skills and the project's, a project skill replacing the user's namesake."""
    names = {s.name for s in project}
    return [s for s in user if s.name not in names] + project


def prompt_section(skills: list[Skill]) -> str:
    """The prompt's `# Skills`: `always` skills whole, the other model-invocable ones by name
    and description; "" when there is nothing to say."""
    always = [s for s in skills if s.always and s.model_invocable]
    listed = [s for s in skills if not s.always and s.model_invocable]
    if not always and not listed:
        return ""
    out = ["# Skills"]
    for s in always:
        out.append(f"## Skill: {s.name}\n{s.body.strip()}")
    if listed:
        out.append("Available skills (load one with the `skill` tool when the task calls for it):")
        out.extend(f"- {s.name}: {s.description}" for s in listed)
    return "\n".join(out)

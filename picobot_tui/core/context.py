"""The system prompt: identity, date, workspace, templates, KB notes, TODO list and skills.

After the identity, date and workspace: the user's own templates from `~/.picobot`
(AGENTS.md, SOUL.md, USER.md, TOOLS.md); the project's instruction files from the
repository root down (core/instructions.py) and its other templates; the project's kb/ and
TODO.md; then the skills by name and description (core/skills.py: the model loads one with
the `skill` tool), the user's and the project's, which replace a user skill of the same
name. The project's own word comes after the user's defaults. An untrusted workspace
(`workspace_files = False`) gives only the user's files. `commands()` gives the custom
commands and skills the user runs as `/name` (core/custom_commands.py).

A template's HTML comments (`<!-- … -->`: placeholders, notes to the user) are not sent, nor
is text an older onboard wrote that is no longer true (`RETIRED_TEMPLATE_TEXT`); a template
with nothing but headings left is left out.

Every file is read through `ConfinedReader` (context_files.py): confined to its folder (the
workspace, or `~/.picobot` without picobot's config, sessions and logs), never blocking,
scrubbed, capped. A file left out is logged once and reported once per session as a
`Notice` event (the loop yields `notices(session_key)`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from picobot_tui.core import instructions
from picobot_tui.core.context_files import ConfinedReader
from picobot_tui.core.custom_commands import RESERVED, Catalog, load_catalog
from picobot_tui.core.events import Notice
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.skills import (  # noqa: F401  (re-exported: the public names)
    SKILL_MAX_CHARS,
    USER_FOLDERS,
    Skill,
    load_skills,
    merged,
    parse_frontmatter,
    prompt_section,
)

log = logging.getLogger("picobot.context")

TEMPLATE_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
KB_MAX_CHARS = 12_000
TEMPLATE_MAX_CHARS = 8_000
TODO_MAX_CHARS = 4_000
PRIVATE_USER_FILES = ("config.json", "sessions", "data", "exports", "trusted.json")
"""What `~/.picobot` holds besides templates: never read into the prompt."""
UNTRUSTED = (
    "This workspace is not trusted: its own files (AGENTS.md, kb/, skills, TODO.md) are not "
    "in this prompt, and your tools may read but not change anything or run commands."
)

_COMMENT = re.compile(r"<!--.*?-->", re.S)
RETIRED_TEMPLATE_TEXT = (
    "(Write here what picobot should know about you: your role, languages, preferences.)",
    " It is not a sandbox.",
)
"""Text that templates onboard wrote once and that is not true or not meant for the model (a
placeholder; "exec is not a sandbox", which exec's own description now says truly): left out
of the prompt even from a user's copy made before the change."""


def template_text(text: str) -> str | None:
    """What of a template goes into the prompt: without HTML comments (placeholders and notes
    to the user) and retired text; None when nothing but headings is left."""
    text = _COMMENT.sub("", text)
    for retired in RETIRED_TEMPLATE_TEXT:
        text = text.replace(retired, "")
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        return None
    return text.strip()


IDENTITY = (
    "You are picobot, a capable assistant working in the user's terminal. You can read and "
    "change files in the workspace and run commands there through your tools. Think step by "
    "step, use tools when they help, and answer in concise Markdown."
)


@dataclass(frozen=True)
class Section:
    """One part of the system prompt, for `/context`: what it is (a file name, `kb/`,
    `skills`, or a built-in part), where it comes from, the bytes read for it, its text."""

    name: str
    source: str
    size: int
    text: str


class ContextBuilder:
    """Builds the system prompt from the workspace, fresh each turn."""

    def __init__(
        self,
        workspace: Path,
        *,
        user_dir: Path | None = None,
        tool_names: list[str] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
        scrub: Scrubber | None = None,
    ) -> None:
        self.workspace = workspace
        self.user_dir = user_dir
        """The user's own templates and skills (`~/.picobot`), or None."""
        self.workspace_files = True
        """Read the workspace's own files (False for an untrusted workspace)."""
        self.tool_names = tool_names or []
        self.now = now
        self.scrub = scrub if scrub is not None else Scrubber()
        self.skipped: dict[str, str] = {}
        """What the last build left out: workspace-relative name -> why."""
        self._logged: set[tuple[str, str]] = set()
        self._noticed: dict[str, set[tuple[str, str]]] = {}
        self._nested: dict[str, instructions.Nested] = {}
        self.sections: list[Section] = []
        """What the last build put in the prompt, part by part (`/context`)."""

    def nested(self, session_key: str, history: list[dict[str, Any]]) -> instructions.Nested | None:
        """The session's instruction files below the workspace, handed over with file tool
        results (core/instructions.py); None for an untrusted workspace. A resumed session
        knows the ones its history already carries."""
        if not self.workspace_files:
            return None
        found = self._nested.get(session_key)
        if found is None or found.workspace != self.workspace:
            reader = self._readers()[1]
            assert reader is not None  # workspace_files
            found = self._nested[session_key] = instructions.Nested(self.workspace, reader)
            found.learn(history)
        return found

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

    def _readers(self) -> tuple[ConfinedReader | None, ConfinedReader | None]:
        """(the user's, the project's): None when there is none, or it is not read."""
        private: tuple[Path, ...] = ()
        user = None
        if self.user_dir is not None:
            private = tuple(self.user_dir / name for name in PRIVATE_USER_FILES)
            if self.user_dir.expanduser().resolve() != self.workspace.expanduser().resolve():
                user = ConfinedReader(
                    self.user_dir, self.scrub, private=private, label=f"{self.user_dir}/"
                )
        project = None
        if self.workspace_files:
            project = ConfinedReader(self.workspace, self.scrub, private=private)
        return user, project

    def build(self) -> str:
        user, project = self._readers()
        try:
            return self._build(user, project)
        finally:
            self.skipped = {
                **(user.skipped if user else {}),
                **(project.skipped if project else {}),
            }
            for name, why in self.skipped.items():
                if (name, why) not in self._logged:
                    self._logged.add((name, why))
                    log.warning("%s left out of the system prompt: it %s", name, why)

    def _build(self, user: ConfinedReader | None, reader: ConfinedReader | None) -> str:
        ws = self.workspace
        parts: list[Section] = [Section("identity", "", 0, f"# Identity\n{IDENTITY}")]
        # The date only: the prompt stays byte-identical all day, so providers' prompt
        # caching holds; the time of day goes with the latest message (core/time_line.py).
        parts.append(Section("date", "", 0, f"# Date\n{self.now():%Y-%m-%d (%A)}"))
        ws_text = f"# Workspace\nYour workspace is {ws}. Relative paths resolve there."
        if self.tool_names:
            ws_text += f"\nTools: {', '.join(self.tool_names)}."
        if not self.workspace_files:
            ws_text += f"\n{UNTRUSTED}"
        parts.append(Section("workspace", str(ws), 0, ws_text))
        if user is not None:
            for name in TEMPLATE_FILES:
                read = user.read(user.workspace / name, TEMPLATE_MAX_CHARS)
                text = template_text(read[0]) if read is not None else None
                if read is not None and text is not None:
                    title = f"# {name} (yours, from {user.workspace})"
                    parts.append(
                        Section(name, str(user.workspace / name), read[1], f"{title}\n{text}")
                    )
        if reader is not None:
            parts.extend(self._instructions(reader))
            for name in TEMPLATE_FILES[1:]:  # AGENTS.md came with the instructions
                read = reader.read(ws / name, TEMPLATE_MAX_CHARS)
                text = template_text(read[0]) if read is not None else None
                if read is not None and text is not None:
                    parts.append(Section(name, str(ws / name), read[1], f"# {name}\n{text}"))
            kb = self._kb(reader)
            if kb is not None:
                parts.append(kb)
            todo = reader.read(ws / "TODO.md", TODO_MAX_CHARS)
            if todo is not None:
                head = "# TODO\nYour checklist (update it with the `todo` tool):\n"
                parts.append(
                    Section("TODO.md", str(ws / "TODO.md"), todo[1], head + todo[0].strip())
                )
        skills = self._skills(user, reader)
        if skills is not None:
            parts.append(skills)
        self.sections = parts
        return "\n\n".join(p.text for p in parts)

    def _instructions(self, reader: ConfinedReader) -> list[Section]:
        """The instruction files from the repository root down to the workspace, outermost
        first (core/instructions.py). Those above the workspace are confined to the
        repository, the workspace's own to the workspace, as every project file."""
        root = instructions.repo_root(self.workspace)
        above = ConfinedReader(root, self.scrub, private=reader.private)
        out = []
        mine = self.user_dir.expanduser().resolve() if self.user_dir is not None else None
        for folder in instructions.folders_down(root, self.workspace):
            at_workspace = folder == reader.root
            if folder == mine and not at_workspace:
                continue  # ~/.picobot's own templates are the user's, read above
            found = instructions.pick(reader if at_workspace else above, folder)
            text = template_text(found.text) if found is not None else None
            if found is None or text is None:
                continue
            if at_workspace:
                title = f"# {found.path.name}"
            else:
                title = f"# {found.path.name} (from the repository: {found.path.relative_to(root)})"
            parts = Section(found.path.name, str(found.path), found.size, f"{title}\n{text}")
            out.append(parts)
        reader.skipped.update(above.skipped)
        return out

    def _kb(self, reader: ConfinedReader) -> Section | None:
        notes = reader.notes(self.workspace / "kb", {".md", ".txt"})
        included, listed, used, total = [], [], 0, 0
        for note in notes:
            read = reader.read(note, KB_MAX_CHARS)
            if read is None:
                continue
            text, size = read
            total += size
            rel = note.relative_to(self.workspace)
            if used + len(text) <= KB_MAX_CHARS:
                included.append(f"## {rel}\n{text.strip()}")
                used += len(text)
            else:
                listed.append(f"- {rel} ({size} bytes)")
        if not included and not listed:
            return None
        out = "# Knowledge base\n" + "\n\n".join(included)
        if listed:
            out += "\n\nMore notes (read them with read_file when relevant):\n" + "\n".join(listed)
        return Section("kb/", str(self.workspace / "kb"), total, out)

    def commands(self) -> Catalog:
        """The custom commands and the skills the user may run as `/name`, as on disk now
        (the project's only when trusted)."""
        user, project = self._readers()
        if user is None and self.user_dir is not None:  # the workspace is ~/.picobot itself
            user = project
        skills = self._load_skills(user, project)
        return load_catalog(user=user, project=project, skills=skills, builtins=RESERVED)

    def skills(self) -> list[Skill]:
        """The skills as they are on disk now: the user's and (trusted) the project's."""
        user, project = self._readers()
        return self._load_skills(user, project)

    def _load_skills(
        self, user: ConfinedReader | None, reader: ConfinedReader | None
    ) -> list[Skill]:
        project = load_skills(self.workspace, reader) if reader is not None else []
        mine = load_skills(user.workspace, user, USER_FOLDERS) if user is not None else []
        return merged(mine, project)

    def _skills(self, user: ConfinedReader | None, reader: ConfinedReader | None) -> Section | None:
        skills = self._load_skills(user, reader)
        text = prompt_section(skills)
        if not text:
            return None
        listed = ", ".join(s.name for s in skills if s.model_invocable)
        size = sum(len(s.body.encode()) for s in skills if s.model_invocable)
        return Section("skills", listed, size, text)

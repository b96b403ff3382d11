"""Slash commands from files, and skills run by the user: `/name args` becomes a message.

A command is a Markdown file in the project's `.picobot/commands/` (a trusted workspace
only) or the user's `~/.picobot/commands/`; its name is the file's (`review.md` is
`/review`; lower-case letters, digits, `-` and `_`), and a project command replaces the
user's namesake. Optional front matter: `description`, `argument-hint`, `model` (the turn
runs on that model). In the body `$ARGUMENTS` is everything after the name and `$1`…`$9`
its words; a body with no placeholder gets the arguments appended. A skill
(core/skills.py) runs the same way, with its body as the message. A name a built-in
command holds is refused: the notice names the file. Read through `ConfinedReader`
(by resolved path, scrubbed, capped) as every prompt file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from picobot_tui.core.context_files import ConfinedReader
from picobot_tui.core.skills import Skill, parse_frontmatter

RESERVED = frozenset(
    [
        "new",
        "sessions",
        "resume",
        "model",
        "plan",
        "compact",
        "export",
        "copy",
        "clear",
        "permissions",
        "mcp",
        "hooks",
        "context",
        "rewind",
        "diff",
        "help",
        "quit",
        "exit",
        "q",
    ]
)
"""The TUI's built-in commands (tests/tui/test_custom_commands_tui.py holds the two lists
together): a file may not take one of these names, in any front end."""
COMMAND_MAX_CHARS = 20_000
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_POSITIONAL = re.compile(r"\$([1-9])")


@dataclass(frozen=True)
class CustomCommand:
    name: str
    description: str
    argument_hint: str
    model: str | None
    body: str
    path: Path
    kind: str
    """"command" or "skill"."""


@dataclass(frozen=True)
class Catalog:
    commands: dict[str, CustomCommand]
    refused: list[str]
    """One notice per file left out (a clashing or malformed name)."""

    def expand(self, text: str) -> tuple[str, CustomCommand] | None:
        """`/name args` -> (the message to send, the command); None when `text` does not
        start with a known custom command."""
        text = text.strip()
        if not text.startswith("/") or text.startswith("//"):
            return None
        name, _, args = text[1:].partition(" ")
        found = self.commands.get(name.lower())
        if found is None:
            return None
        return fill(found.body, args.strip()), found


def fill(body: str, args: str) -> str:
    """`body` with `$ARGUMENTS` and `$1`…`$9` filled in (missing words are empty); with no
    placeholder, the arguments follow on their own line."""
    words = args.split()
    if "$ARGUMENTS" not in body and not _POSITIONAL.search(body):
        return f"{body.strip()}\n\n{args}" if args else body.strip()
    out = body.replace("$ARGUMENTS", args)
    out = _POSITIONAL.sub(
        lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", out
    )
    return out.strip()


def _from_folder(reader: ConfinedReader, folder: Path, refused: list[str]) -> list[CustomCommand]:
    if reader.inside(folder) is None or not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.md")):
        name = path.stem.lower()
        if not _NAME.match(name):
            refused.append(f"{path}: not a command name (letters, digits, - and _)")
            continue
        read = reader.read(path, COMMAND_MAX_CHARS)
        if read is None:
            continue
        meta, body = parse_frontmatter(read[0])
        out.append(
            CustomCommand(
                name,
                meta.get("description", ""),
                meta.get("argument-hint", ""),
                meta.get("model") or None,
                body,
                path,
                "command",
            )
        )
    return out


def load_catalog(
    *,
    user: ConfinedReader | None,
    project: ConfinedReader | None,
    skills: list[Skill],
    builtins: frozenset[str],
) -> Catalog:
    """The user's commands, then the project's (`project` is None when untrusted), then
    the skills under names no command took; built-in names are refused."""
    refused: list[str] = []
    found: dict[str, CustomCommand] = {}
    for reader, folder in (
        (user, "commands"),
        (project, ".picobot/commands"),
    ):
        if reader is not None:
            for cmd in _from_folder(reader, reader.workspace / folder, refused):
                found[cmd.name] = cmd  # the project's after the user's: it replaces it
    for skill in skills:
        name = skill.name.lower()
        if _NAME.match(name) and name not in found:
            found[name] = CustomCommand(
                name, skill.description, "", None, skill.body, skill.path, "skill"
            )
    for name in sorted(set(found) & builtins):
        cmd = found.pop(name)
        refused.append(f"{cmd.path}: /{name} is a built-in command; this {cmd.kind} is not loaded")
    return Catalog(dict(sorted(found.items())), refused)

"""Custom slash commands from files and skills run as `/name` (core/custom_commands.py):
placeholders, where they are found and which wins, what is refused and said."""

from __future__ import annotations

from pathlib import Path

import pytest

from picobot_tui.core.context import ContextBuilder
from picobot_tui.core.custom_commands import fill
from picobot_tui.core.secrets import Scrubber

SECRET = "sk-command-0123456789abcdef"


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Review $ARGUMENTS now", "src/ tests/", "Review src/ tests/ now"),
        ("diff $1 against $2", "a b c", "diff a against b"),
        ("only $3", "a", "only"),
        ("Summarise the repo.", "", "Summarise the repo."),
        ("Summarise the repo.", "briefly", "Summarise the repo.\n\nbriefly"),
    ],
)
def test_placeholders(body: str, args: str, expected: str) -> None:
    assert fill(body, args) == expected


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    user, ws = tmp_path / "home", tmp_path / "ws"
    (user / "commands").mkdir(parents=True)
    (ws / ".picobot" / "commands").mkdir(parents=True)
    (user / "commands" / "mine.md").write_text("---\ndescription: the user's\n---\nMINE $1")
    (user / "commands" / "both.md").write_text("USER-BOTH")
    (ws / ".picobot" / "commands" / "both.md").write_text(
        f"---\ndescription: the project's\nargument-hint: PATH\nmodel: openai/other\n---\n"
        f"PROJECT-BOTH $ARGUMENTS {SECRET}"
    )
    (ws / ".picobot" / "commands" / "help.md").write_text("a clash")
    (ws / ".picobot" / "commands" / "Bad Name.md").write_text("x")
    (ws / "skills" / "tidy").mkdir(parents=True)
    (ws / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: tidy up\ndisable-model-invocation: true\n---\nTIDY-BODY"
    )
    return user, ws


def test_the_catalog(tmp_path: Path) -> None:
    user, ws = _layout(tmp_path)
    catalog = ContextBuilder(ws, user_dir=user, scrub=Scrubber([SECRET])).commands()
    assert sorted(catalog.commands) == ["both", "mine", "tidy"]
    both = catalog.commands["both"]
    assert (both.description, both.argument_hint, both.model) == (
        "the project's",
        "PATH",
        "openai/other",
    )
    text, cmd = catalog.expand("/both src/") or ("", None)
    assert text.startswith("PROJECT-BOTH src/ ") and SECRET not in text and cmd is both
    assert catalog.expand("/mine a b") is not None
    assert (catalog.expand("/mine a b") or ("",))[0] == "MINE a"
    assert (catalog.expand("/tidy now") or ("",))[0] == "TIDY-BODY\n\nnow"  # a user-only skill
    assert catalog.expand("/nope") is None and catalog.expand("hello") is None
    assert catalog.expand("//both") is None
    refused = "\n".join(catalog.refused)
    assert f"{ws / '.picobot' / 'commands' / 'help.md'}: /help is a built-in command" in refused
    assert "Bad Name.md: not a command name" in refused


def test_an_untrusted_workspace_gives_only_the_users(tmp_path: Path) -> None:
    user, ws = _layout(tmp_path)
    ctx = ContextBuilder(ws, user_dir=user)
    ctx.workspace_files = False
    catalog = ctx.commands()
    assert sorted(catalog.commands) == ["both", "mine"]
    assert catalog.commands["both"].body == "USER-BOTH"
    assert catalog.refused == []

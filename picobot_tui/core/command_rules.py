"""Command rules for exec's "always allow": `exec(git status:*)` in `tools.alwaysAllow` (or
saved for one workspace, config/workspace_rules.py) allows the commands whose first words are
`git status` and whose other words the reviewed table lets a rule cover (core/command_risk:
no option that runs a program, loads config or plugins, or writes a file); nothing else.

A rule matches on the words the shell will see, never on the raw text. A command matches
only when it is one simple command made of literal words: no `;`, `&&`, `||`, `&`, pipes,
redirections, newlines, subshells, assignments (`A=1 git status`), `$`-expansions, command
substitutions (`$(…)`, backticks), globs, braces or `~`. Quotes and backslashes are removed
as the shell removes them, so `git "status"` is `git status`. Anything else is put to the
user as before. bashlex gives the structure; a character scan refuses first what a
word-level rule must never judge, so a bashlex quirk cannot widen a rule.

Entry forms (a plain tool name keeps its meaning: every call of that tool):
  `exec(git status:*)`  commands whose first words are `git status` (the rest as above);
  `exec(git status)`    exactly the command `git status`.

The approval offers a prefix only for a program and subcommand the table lists, and only when
the command holds nothing the prefix would not cover; otherwise it offers the exact command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from picobot_tui.core import command_risk
from picobot_tui.core.tools.exec.words import Expander, Unanalysable
from picobot_tui.core.visible import has_invisible

COMMAND_TOOL = "exec"
_RULE_RE = re.compile(r"^exec\((?P<words>.+?)(?P<any>:\*)?\)$", re.S)
# Outside single quotes, none of these may appear: operators, redirections, expansions,
# globs, braces, `~`, `!` and comments. Inside double quotes, `$` and backticks still expand.
_UNQUOTED_REFUSED = frozenset(";&|<>()$`*?[]{}~#!")
_DQUOTED_REFUSED = frozenset("$`!")
_MAX_COMMAND = 4096

_PLAIN_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+@,=-]*")


def _scan_ok(command: str) -> bool:
    """No character that makes the command more than literal words (quote-aware)."""
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c == "\\":
            i += 2
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return False
            i = end + 1
        elif c == '"':
            j = i + 1
            while j < n and command[j] != '"':
                if command[j] in _DQUOTED_REFUSED:
                    return False
                j += 2 if command[j] == "\\" else 1
            if j >= n:
                return False
            i = j + 1
        elif c in _UNQUOTED_REFUSED:
            return False
        else:
            i += 1
    return True


def _no_values(_: str) -> None:
    return None


def literal_words(command: str) -> list[str] | None:
    """The words of `command` when it is one simple command of literal words, else None."""
    if not command or len(command) > _MAX_COMMAND or has_invisible(command):
        return None
    if any(c in command for c in "\n\r\t"):  # one line, even inside quotes
        return None
    if not command.strip() or not _scan_ok(command):
        return None
    import bashlex  # lazy, as in tools/exec/confine.py: needed only when an exec call is judged

    try:
        trees = bashlex.parse(command)
    except Exception:  # noqa: BLE001 - any parser failure means "not a literal command"
        return None
    if len(trees) != 1 or trees[0].kind != "command":
        return None
    expander = Expander(var=_no_values, subst=_no_values)
    words: list[str] = []
    for part in trees[0].parts:
        if part.kind != "word" or getattr(part, "parts", None):
            return None  # an assignment, a redirection, an expansion of any kind
        start, end = part.pos
        try:
            values = expander.word(command[start:end])
        except Unanalysable:
            return None
        if len(values) != 1 or values[0].unknown or values[0].split:
            return None
        words.append(values[0].text)
    return words or None


def join_words(words: list[str]) -> str:
    """Words as one line the rule stores and the modal shows (quoted where needed)."""
    return shlex.join(words)


def exact_rule(words: list[str]) -> str:
    """The `tools.alwaysAllow` entry for exactly these words: `exec(ls -la)`."""
    return f"{COMMAND_TOOL}({join_words(words)})"


def prefix_rule(prefix: str) -> str:
    """The `tools.alwaysAllow` entry for a prefix: `exec(git status:*)`."""
    return f"{COMMAND_TOOL}({prefix}:*)"


@dataclass(frozen=True)
class Offer:
    """What "always" would save for a command: `rule`, and `prefix` when it is a prefix rule
    (None: the rule is the exact command)."""

    rule: str
    prefix: str | None = None


def offered(command: Any) -> Offer | None:
    """What the approval offers to always allow for this command: the prefix of its program
    and subcommand (`git status`, `npm run build`, `python -m pytest`, `ls`) when the
    reviewed table (core/command_risk) lists them and no option of the command is one it
    asks about; else the exact command. None when no rule could match it (not one simple
    command of literal words, or a program name that is not plain ASCII)."""
    if not isinstance(command, str):
        return None
    words = literal_words(command)
    if not words or not _PLAIN_WORD.fullmatch(words[0]):
        return None
    n = command_risk.prefix_length(words)
    if n is not None and not command_risk.findings(words, n):
        prefix = join_words(words[:n])
        return Offer(prefix_rule(prefix), prefix)
    return Offer(exact_rule(words))


def parse_rule(entry: str) -> tuple[list[str], bool] | None:
    """(the rule's words, whether more words may follow) of an `exec(...)` entry, else None
    (a plain tool name, or a rule whose words are not literal)."""
    m = _RULE_RE.match(entry.strip()) if isinstance(entry, str) else None
    if m is None:
        return None
    words = literal_words(m.group("words"))
    if not words:
        return None
    return words, m.group("any") is not None


@dataclass(frozen=True)
class RuleCheck:
    """Whether an `exec(...)` rule allows a command, and, when one matched its first words
    but not the rest, why not (`"exec(git log:*): --output=x: writes …"`)."""

    allowed: bool
    why_not: tuple[str, ...] = ()


def check_command(entries: Iterable[Any], command: Any) -> RuleCheck:
    """Whether an `exec(...)` rule among `entries` allows `command`: its words start with
    the rule's, and a prefix rule covers the rest (no option the reviewed table asks about,
    core/command_risk)."""
    if not isinstance(command, str):
        return RuleCheck(False)
    rules = [(e, r) for e in entries if isinstance(e, str) and (r := parse_rule(e)) is not None]
    if not rules:
        return RuleCheck(False)
    words = literal_words(command)
    if not words:
        return RuleCheck(False)
    why: list[str] = []
    for entry, (prefix, more) in rules:
        if words[: len(prefix)] != prefix:
            continue
        if len(words) == len(prefix):
            return RuleCheck(True)
        if not more:
            continue
        found = command_risk.findings(words, len(prefix))
        if not found:
            return RuleCheck(True)
        why += [f"{entry.strip()}: {f}" for f in found]
    return RuleCheck(False, tuple(dict.fromkeys(why)))


def command_allowed(entries: Iterable[Any], command: Any) -> bool:
    """Whether an `exec(...)` rule among `entries` allows `command`."""
    return check_command(entries, command).allowed


def describe(entry: str) -> str:
    """A rule in words, for `/permissions`."""
    rule = parse_rule(entry)
    if rule is None:
        return f"every {entry} call"
    words, more = rule
    if not more:
        return f"exactly {join_words(words)}"
    if command_risk.known(words):
        return (
            f"commands starting with {join_words(words)}; options that run programs, load "
            "config or write files still ask"
        )
    return (
        f"commands starting with {join_words(words)}; every option still asks "
        f"({words[0]} is not in picobot's reviewed table)"
    )

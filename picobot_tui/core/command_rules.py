"""Command-prefix rules for exec's "always allow": `exec(git status:*)` in `tools.alwaysAllow`
allows every command whose first words are `git status`, and nothing else.

A rule matches on the words the shell will see, never on the raw text. A command matches
only when it is one simple command made of literal words: no `;`, `&&`, `||`, `&`, pipes,
redirections, newlines, subshells, assignments (`A=1 git status`), `$`-expansions, command
substitutions (`$(…)`, backticks), globs, braces or `~`. Quotes and backslashes are removed
as the shell removes them, so `git "status"` is `git status`. Anything else is put to the
user as before. bashlex gives the structure; a character scan refuses first what a
word-level rule must never judge, so a bashlex quirk cannot widen a rule.

Entry forms (a plain tool name keeps its meaning: every call of that tool):
  `exec(git status:*)`  commands whose first words are `git status`;
  `exec(git status)`    exactly the command `git status`.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from picobot_tui.core.tools.exec.words import Expander, Unanalysable
from picobot_tui.core.visible import has_invisible

COMMAND_TOOL = "exec"
_RULE_RE = re.compile(r"^exec\((?P<words>.+?)(?P<any>:\*)?\)$", re.S)
# Outside single quotes, none of these may appear: operators, redirections, expansions,
# globs, braces, `~`, `!` and comments. Inside double quotes, `$` and backticks still expand.
_UNQUOTED_REFUSED = frozenset(";&|<>()$`*?[]{}~#!")
_DQUOTED_REFUSED = frozenset("$`!")
_MAX_COMMAND = 4096

# Commands that run another command given as an argument: a rule on their first words would
# allow anything (`env rm -rf …`, `xargs …`, `find . -exec …`, `sed 'e …'`). None is offered.
WRAPPERS = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "su",
        "xargs",
        "nohup",
        "time",
        "timeout",
        "nice",
        "ionice",
        "command",
        "builtin",
        "exec",
        "eval",
        "watch",
        "ssh",
        "chroot",
        "stdbuf",
        "setsid",
        "strace",
        "ltrace",
        "nsenter",
        "unshare",
        "busybox",
        "flock",
        "script",
        "parallel",
        "find",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "sed",
        "tar",
        "rsync",
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "csh",
        "tcsh",
    }
)
# Interpreters: a script name is a fine prefix (`python build.py`), `-m module` too
# (`python -m pytest`), but never an option such as `-c` or `-e` (that is any code).
INTERPRETERS = frozenset(
    {
        "python",
        "python3",
        "python2",
        "pypy",
        "pypy3",
        "node",
        "deno",
        "perl",
        "ruby",
        "php",
        "lua",
        "luajit",
        "Rscript",
    }
)
# Package runners whose `run`/`exec`/`x` takes a script name: the prefix includes it.
RUNNERS = frozenset(
    {"npm", "yarn", "pnpm", "bun", "uv", "poetry", "pipenv", "pdm", "hatch", "npx", "bunx"}
)
_RUN_WORDS = frozenset({"run", "exec", "x"})
# Tools whose first word alone is a blanket over many unrelated subcommands (or options that
# run programs, `git -c core.pager=…`): without a subcommand word, nothing is offered.
NEEDS_SUBCOMMAND = frozenset(
    {
        "git",
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "gh",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "make",
        "npx",
        "bunx",
        "apt",
        "apt-get",
        "brew",
        "systemctl",
    }
)
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


def offered_prefix(command: Any) -> str | None:
    """The prefix the approval offers to always allow for this command, or None when no
    prefix would be safe: the first word and its subcommand (`git status`, `npm test`,
    `npm run build`, `python -m pytest`, `ls`), never a shell, a wrapper or `python -c`."""
    if not isinstance(command, str):
        return None
    words = literal_words(command)
    if not words:
        return None
    first, rest = words[0], words[1:]
    if first in WRAPPERS or not _PLAIN_WORD.fullmatch(first):
        return None

    def plain(i: int) -> bool:
        return (
            len(rest) > i and not rest[i].startswith("-") and bool(_PLAIN_WORD.fullmatch(rest[i]))
        )

    if first in INTERPRETERS:
        if rest[:1] == ["-m"] and plain(1):
            return join_words(words[:3])
        return join_words(words[:2]) if plain(0) else None
    if first in RUNNERS and rest[:1] and rest[0] in _RUN_WORDS:
        return join_words(words[:3]) if plain(1) else None
    if plain(0):
        return join_words(words[:2])
    if first in NEEDS_SUBCOMMAND:
        return None
    return first


def prefix_rule(prefix: str) -> str:
    """The `tools.alwaysAllow` entry for a prefix: `exec(git status:*)`."""
    return f"{COMMAND_TOOL}({prefix}:*)"


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


def command_allowed(entries: Any, command: Any) -> bool:
    """Whether an `exec(...)` rule among `entries` allows `command`."""
    if not isinstance(command, str):
        return False
    rules = [r for e in entries if isinstance(e, str) and (r := parse_rule(e)) is not None]
    if not rules:
        return False
    words = literal_words(command)
    if not words:
        return False
    for prefix, more in rules:
        if words[: len(prefix)] == prefix and (more or len(words) == len(prefix)):
            return True
    return False


def describe(entry: str) -> str:
    """A rule in words, for `/permissions`."""
    rule = parse_rule(entry)
    if rule is None:
        return f"every {entry} call"
    words, more = rule
    return f"commands starting with {join_words(words)}" if more else f"exactly {join_words(words)}"

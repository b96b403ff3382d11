"""The reviewed table of programs a saved exec rule may name, and what their options do.

A prefix rule (`exec(git log:*)`) is only as safe as what may follow its words. For each
program (and subcommand) whose prefix picobot offers to always allow, the table lists the
options that run another program, load other config, code or plugins, write a file or send
data out (`git grep -O<cmd>`, `git log --output=<file>`, `make --eval`, `pytest -p`, …); a
call carrying one is asked about even under a matching rule. A program the table does not
list gets no prefix offer (only its exact command), and a rule written for one by hand covers
its plain operands only: every option is asked about.

Environment assignments (`GIT_EXTERNAL_DIFF=… git diff`, `LD_PRELOAD=…`, `MAKEFLAGS=…`),
redirections (`> file`) and every other shell construct never match a rule in the first place
(core/command_rules.py: a rule matches one simple command of literal words).

Modules: `spec` (the entry types and the scan), `git`, `build` (make, npm/pnpm/yarn/bun,
pytest, mypy, ruff, cargo, go, pip), `system` (docker/podman, kubectl, read-only tools).
"""

from __future__ import annotations

import re

from picobot_tui.core.command_risk.build import (
    BUN,
    CARGO,
    GO,
    MAKE,
    MYPY,
    NPM,
    PIP,
    PNPM,
    PYTEST,
    RUFF,
    YARN,
)
from picobot_tui.core.command_risk.git import GIT
from picobot_tui.core.command_risk.spec import Command, is_option, scan
from picobot_tui.core.command_risk.system import DOCKER, KUBECTL, READ_ONLY

__all__ = ["TABLE", "findings", "known", "prefix_length"]

TABLE: dict[str, Command] = {
    "git": GIT,
    "make": MAKE,
    "gmake": MAKE,
    "npm": NPM,
    "pnpm": PNPM,
    "yarn": YARN,
    "bun": BUN,
    "pytest": PYTEST,
    "py.test": PYTEST,
    "mypy": MYPY,
    "ruff": RUFF,
    "cargo": CARGO,
    "go": GO,
    "pip": PIP,
    "pip3": PIP,
    "docker": DOCKER,
    "podman": DOCKER,
    "kubectl": KUBECTL,
    **READ_ONLY,
}

# Words that run the program named next: `python -m pytest` is pytest, `uv run pytest`
# too. The launcher's own options (`python -X …`, `uv run --with …`) are not recognised, so
# such a command is judged as the launcher's, which the table does not list.
LAUNCHERS: tuple[tuple[str, ...], ...] = (
    ("python", "-m"),
    ("python3", "-m"),
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+@,=-]*")


def _program(words: list[str]) -> tuple[str, int]:
    """The program's name and the index of the word after it (a launcher's program)."""
    for launcher in LAUNCHERS:
        n = len(launcher)
        if tuple(words[:n]) == launcher and len(words) > n and not is_option(words[n]):
            return words[n], n + 1
    return words[0], 1


def known(words: list[str]) -> bool:
    """The table lists the program these words run."""
    return bool(words) and _program(words)[0] in TABLE


def prefix_length(words: list[str]) -> int | None:
    """How many words of this command make the prefix picobot offers (`git status`,
    `npm run build`, `python -m pytest`, `ls`), or None when the program (or subcommand)
    is not in the table, or an option comes before its subcommand or name."""
    if not words:
        return None
    name, i = _program(words)
    cmd = TABLE.get(name)
    while cmd is not None:
        nxt = words[i] if i < len(words) else None
        plain = nxt is not None and not is_option(nxt) and bool(_PLAIN_NAME.fullmatch(nxt))
        if cmd.subcommands is not None:
            cmd = cmd.subcommands.get(nxt) if plain and nxt is not None else None
        elif cmd.named is not None:
            cmd = cmd.named if plain else None
        else:
            return i
        i += 1
    return None


def findings(words: list[str], covered: int) -> list[str]:
    """Why a rule that spells the first `covered` words does not cover all of `words`: one
    line per dangerous option or refused operand among the rest ([] when it covers them)."""
    name, i = _program(words)
    cmd = TABLE.get(name)
    if cmd is None:
        out = []
        for j, word in enumerate(words[1:], 1):
            if j >= covered and (is_option(word) or "=" in word or word.startswith(("+", "@"))):
                out.append(
                    f"{word}: {name} is not in picobot's reviewed table: no option is covered"
                )
        return out
    return scan(cmd, words, i, covered, name)

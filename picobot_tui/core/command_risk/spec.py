"""The shape of the reviewed table, and the scan that judges a command's words against it.

A saved prefix rule (`exec(git log:*)`) covers the words after its own only when none of them
is an option the table lists as dangerous (or, for a command kept to an allow-list, any option
not on it), and none is an operand the entry refuses (`make test other`: another target). The
scan errs one way only: when it cannot tell, it asks.

Option syntaxes (`style`):

- "gnu" (git's parse-options, getopt_long, optparse, argparse, clap, pflag): `--name`,
  `--name=value`, `--name value`; every unambiguous prefix of a long name (`--outp` for
  `--output`, as git and getopt_long accept it) counts as that name; a short option counts
  anywhere in a cluster (`-iO'cmd'`, `-fO`), even where the program would read it as the
  value of the option before it (asking once too often is the cost of never missing one).
- "go" (Go's flag package): `-name` or `--name`, `=value` or the next word, no clusters, no
  abbreviations; `-test.name` is `-name` (go test passes those to the test binary).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Risk = Literal["runs", "config", "writes", "sends"]
"""What a dangerous option does: runs another program; loads other config, code or plugins
(or acts on another repository or cluster); writes a file; sends data out."""

Style = Literal["gnu", "go"]


@dataclass(frozen=True)
class Opt:
    """A dangerous option: its spellings (`-O`, `--open-files-in-pager`), what it does, and
    the values that make it harmless (pytest's `-p no:NAME` turns a plugin off)."""

    names: tuple[str, ...]
    risk: Risk
    why: str
    unless: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    """One program or subcommand a prefix rule may name."""

    danger: tuple[Opt, ...] = ()
    """Options asked about wherever they appear after this command's name."""
    safe_only: frozenset[str] | None = None
    """When set, the only options a rule covers; every other is asked about (npm reads any
    `--name=value` as config). An entry ending in `=` allows any value."""
    values: Mapping[str, str] = field(default_factory=dict)
    """Safe options whose value is the next word, with the pattern that value has (so the
    word is not judged as an operand: `make test -j 4`)."""
    operands: Literal["any", "none", "plain"] = "any"
    """The words after the prefix that are not options: `any` (paths, revisions); `none`
    (asked: another make target, a script's arguments); `plain` (asked when they look like
    settings: `=`, or a leading `+` or `@`)."""
    operands_why: str = ""
    subcommands: Mapping[str, Command] | None = None
    """The next operand names one of these; any other is not reviewed (asked about)."""
    before: frozenset[str] = frozenset()
    """Options allowed between the program and its subcommand; any other is asked about."""
    before_values: frozenset[str] = frozenset()
    """Options before the subcommand whose value is the next word (`git -C dir`)."""
    named: Command | None = None
    """The next operand is a name that belongs to the prefix (`make test`, `npm run build`)."""
    style: Style = "gnu"
    bare: str = ""
    """When set, what this command does with no subcommand after it (asked about: `git stash`
    alone stashes the user's changes away)."""
    abbrev: bool = True
    """The program takes any unambiguous prefix of a long option as that option (git,
    getopt_long, argparse, optparse do; clap and pflag do not)."""
    real: frozenset[str] = frozenset()
    """Safe long options that begin a dangerous one's name (`--co` of pytest, before
    `--config-file`): as spelled they are themselves, not an abbreviation."""


UNKNOWN = Command(safe_only=frozenset(), operands="plain")
"""What a rule covers after a program (or subcommand) the table does not list: operands
that are not settings; every option is asked about (nobody reviewed what they do)."""

RISK_WORDS: dict[Risk, str] = {
    "runs": "runs another program",
    "config": "loads other config, code or plugins",
    "writes": "writes a file",
    "sends": "sends data out",
}


def is_option(word: str) -> bool:
    return word.startswith("-") and word not in ("-", "--")


def _allowed(word: str, allowed: frozenset[str]) -> bool:
    name, eq, _ = word.partition("=")
    return word in allowed or bool(eq) and name + "=" in allowed


def _long_matches(cmd: Command, name: str, spelled: str) -> bool:
    """`name` (`--output`, or go's `-o`) is what the option word `spelled` names."""
    if cmd.style == "go":
        return spelled.lstrip("-").removeprefix("test.") == name.lstrip("-")
    if not name.startswith("--") or not spelled.startswith("--"):
        return False
    if spelled == name:
        return True
    # an abbreviation (at least one letter), unless it is a real option of its own
    return cmd.abbrev and len(spelled) > 2 and name.startswith(spelled) and spelled not in cmd.real


def danger_of(cmd: Command, word: str, following: str | None) -> Opt | None:
    """The dangerous option `word` is (or holds, in a cluster), else None. `following` is
    the next word (the value of `-p NAME`)."""
    if cmd.style == "gnu" and not word.startswith("--"):
        return _short_danger(cmd, word[1:], following)
    spelled, eq, attached = word.partition("=")
    for opt in cmd.danger:
        for name in opt.names:
            if (cmd.style == "go" or name.startswith("--")) and _long_matches(cmd, name, spelled):
                value = attached if eq else following
                if opt.unless and value is not None and value.startswith(opt.unless):
                    continue
                return opt
    return None


def _short_danger(cmd: Command, cluster: str, following: str | None) -> Opt | None:
    """The first dangerous short option in a cluster (`-iO'cmd'`: `-O`). A letter whose value
    makes it harmless (`-pno:NAME`) ends the cluster: the rest is that value. Any other
    letter is taken as an option, whether or not the program would read it as a value."""
    short = {name[1]: opt for opt in cmd.danger for name in opt.names if len(name) == 2}
    for k, letter in enumerate(cluster):
        opt = short.get(letter)
        if opt is None:
            continue
        value = cluster[k + 1 :] or following
        if opt.unless and value is not None and value.startswith(opt.unless):
            return None
        return opt
    return None


def _why(word: str, opt: Opt) -> str:
    return f"{word}: {opt.why} ({RISK_WORDS[opt.risk]})"


def scan(cmd: Command, words: list[str], start: int, covered: int, program: str) -> list[str]:
    """Why `words[start:]` (the words after the program's name, under `cmd`) are not all
    covered by a rule that spells the first `covered` words ([] when they are)."""
    out: list[str] = []
    choosing = cmd.subcommands is not None
    naming = cmd.named is not None
    path = program
    skip = ""  # the pattern the next word matches when it is the value of the option before
    named_at = start - 1  # where the current command's name is
    for j in range(start, len(words)):
        word, seen = words[j], j < covered
        following = words[j + 1] if j + 1 < len(words) else None
        if skip:
            pattern, skip = skip, ""
            if re.fullmatch(pattern, word):
                continue
        if word == "--":
            continue  # the words after it are judged the same way (never fewer questions)
        if is_option(word):
            opt = danger_of(cmd, word, following)
            if choosing:
                if word.partition("=")[0] in cmd.before_values and "=" not in word:
                    skip = ".*"
                if not seen and not _allowed(word, cmd.before):
                    out.append(
                        _why(word, opt)
                        if opt
                        else f"{word}: an option before the subcommand that picobot's table "
                        f"does not list for {path}"
                    )
                continue
            if not seen:
                if opt is not None:
                    out.append(_why(word, opt))
                elif cmd.safe_only is not None and not _allowed(word, cmd.safe_only):
                    out.append(
                        f"{word}: an option picobot's table does not list as safe for {path}"
                    )
            skip = cmd.values.get(word, "")
            continue
        if choosing:
            assert cmd.subcommands is not None
            sub = cmd.subcommands.get(word)
            path = f"{path} {word}"
            if sub is None:
                if not seen:
                    out.append(f"{path}: not in picobot's reviewed table")
                sub = UNKNOWN
            cmd, named_at = sub, j
            choosing, naming = cmd.subcommands is not None, cmd.named is not None
            continue
        if naming:
            assert cmd.named is not None
            cmd = cmd.named
            path = f"{path} {word}"
            choosing, naming = cmd.subcommands is not None, cmd.named is not None
            continue
        if seen or cmd.operands == "any":
            continue
        if cmd.operands == "none":
            out.append(f"{word}: {cmd.operands_why or 'more words than the rule names'}")
        elif "=" in word or word.startswith(("+", "@")):
            out.append(f"{word}: a setting for {path}, which picobot's table does not list")
    if choosing and cmd.bare and named_at >= covered:
        out.append(f"{path} alone: {cmd.bare}")
    return out

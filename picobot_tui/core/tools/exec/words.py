"""What the shell makes of one word: quote removal, escapes, `$'...'`, parameters (with the
`${x%/*}`-style operators), command substitutions and `~`, as the workspace guard needs it.

bashlex finds the words (and the structure around them), but its own expansion of a word is
not the shell's (it reads `$'\\x2f'` as a parameter, for one), so each word's source text is
expanded here. A part whose value cannot be known (a command's output, a variable set by
`read`) is kept as UNKNOWN_CHAR with a description of where it came from; the guard decides
what that means. Globs and braces are left in the text for the guard to expand.
"""

from __future__ import annotations

import fnmatch
import pwd
import re
from collections.abc import Callable
from dataclasses import dataclass

UNKNOWN_CHAR = "\x00"
MAX_VALUES = 256  # possible values of one word before the guard gives up on it
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ANSI_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
    "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


class Unanalysable(Exception):
    """The guard cannot tell what the shell will do with this text."""


@dataclass(frozen=True)
class Value:
    """One possible result of expanding a word."""

    text: str
    unknown: tuple[str, ...] = ()
    """Where the parts marked UNKNOWN_CHAR come from ("$(cat list)", "$line")."""
    split: bool = False
    """Part of it is an unquoted expansion (so the shell splits it into words and globs it)."""


Values = frozenset[str] | None
"""A variable's possible values; None when unknown."""


@dataclass
class Expander:
    """Expands words; `var(name)` gives a variable's values, `subst(text)` analyses the
    command of a `$(...)` and returns its output's possible values (None: unknown)."""

    var: Callable[[str], Values]
    subst: Callable[[str], Values]

    def word(self, raw: str, *, assignment: bool = False) -> list[Value]:
        parts = _Parts()
        _Scan(self, raw, parts, assignment=assignment).run()
        return parts.values()

    def string(self, raw: str) -> Values:
        """The values of `raw` as a word; None when any part is unknown."""
        out = set()
        for v in self.word(raw):
            if v.unknown:
                return None
            out.add(v.text)
        return frozenset(out)


class _Parts:
    """The cross product of the alternatives of each part of a word, capped."""

    def __init__(self) -> None:
        self._vals: list[tuple[str, tuple[str, ...], bool]] = [("", (), False)]

    def lit(self, text: str) -> None:
        self._vals = [(t + text, u, s) for t, u, s in self._vals]

    def alts(self, values: Values, where: str, *, split: bool) -> None:
        if values is None:
            self._vals = [(t + UNKNOWN_CHAR, (*u, where), s or split) for t, u, s in self._vals]
            return
        if len(self._vals) * len(values) > MAX_VALUES:
            self._vals = [(t + UNKNOWN_CHAR, (*u, f"{where} (too many possible values)"), s)
                          for t, u, s in self._vals]  # fmt: skip
            return
        self._vals = [(t + v, u, s or split) for t, u, s in self._vals for v in sorted(values)]

    def values(self) -> list[Value]:
        return [Value(t, u, s) for t, u, s in self._vals]


def matching(raw: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` at raw[i] (quote-aware)."""
    depth, j, n = 0, i, len(raw)
    while j < n:
        c = raw[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            end = raw.find("'", j + 1)
            if end < 0:
                raise Unanalysable("an unterminated single quote")
            j = end + 1
            continue
        if c == '"':
            j = _dquote_end(raw, j)
            continue
        if c == "`":
            end = _backtick_end(raw, j)
            j = end
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise Unanalysable(f"an unterminated {open_!r}")


def _dquote_end(raw: str, i: int) -> int:
    j, n = i + 1, len(raw)
    while j < n:
        c = raw[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        if c == "$" and raw.startswith("$(", j):
            j = matching(raw, j + 1, "(", ")")
            continue
        if c == "$" and raw.startswith("${", j):
            j = matching(raw, j + 1, "{", "}")
            continue
        if c == "`":
            j = _backtick_end(raw, j)
            continue
        j += 1
    raise Unanalysable("an unterminated double quote")


def _backtick_end(raw: str, i: int) -> int:
    j = i + 1
    while j < len(raw):
        if raw[j] == "\\":
            j += 2
            continue
        if raw[j] == "`":
            return j + 1
        j += 1
    raise Unanalysable("an unterminated backquote")


def _ansi_c(raw: str, i: int) -> tuple[str, int]:
    """Decode $'...' starting at raw[i] == "$"; return (text, index past the quote)."""
    out: list[str] = []
    j = i + 2
    while j < len(raw):
        c = raw[j]
        if c == "'":
            return "".join(out), j + 1
        if c != "\\" or j + 1 >= len(raw):
            out.append(c)
            j += 1
            continue
        e = raw[j + 1]
        j += 2
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(f"[0-9A-Fa-f]{{1,{width}}}", raw[j:])
            if m:
                out.append(chr(int(m.group(0), 16)))
                j += len(m.group(0))
            else:
                out.append("\\" + e)
        elif e in "01234567":
            m = re.match("[0-7]{1,3}", raw[j - 1 :])
            assert m
            out.append(chr(int(m.group(0), 8) & 0xFF))
            j += len(m.group(0)) - 1
        elif e == "c" and j < len(raw):
            out.append(chr(ord(raw[j]) & 0x1F))
            j += 1
        else:
            out.append("\\" + e)
    raise Unanalysable("an unterminated $'...' quote")


class _Scan:
    def __init__(self, ex: Expander, raw: str, parts: _Parts, *, assignment: bool) -> None:
        self.ex, self.raw, self.parts, self.assignment = ex, raw, parts, assignment

    def run(self) -> None:
        raw, parts, i, n = self.raw, self.parts, 0, len(self.raw)
        tilde_ok = True  # at the start of the word (or after `=` / `:` in an assignment)
        while i < n:
            c = raw[i]
            if c == "~" and tilde_ok:
                i = self._tilde(i)
                tilde_ok = False
                continue
            tilde_ok = self.assignment and c in "=:"
            if c == "\\":
                if i + 1 < n and raw[i + 1] != "\n":
                    parts.lit(raw[i + 1])
                i += 2
            elif c == "'":
                end = raw.find("'", i + 1)
                if end < 0:
                    raise Unanalysable("an unterminated single quote")
                parts.lit(raw[i + 1 : end])
                i = end + 1
            elif c == "$" and raw.startswith("$'", i):
                text, i = _ansi_c(raw, i)
                parts.lit(text)
            elif c == "$" and raw.startswith('$"', i):
                i = self._dquoted(i + 1)
            elif c == '"':
                i = self._dquoted(i)
            elif c in "$`":
                i = self._dollar(i, split=True)
            elif c in "<>" and raw.startswith("(", i + 1):  # process substitution (bash)
                end = matching(raw, i + 1, "(", ")")
                self.ex.subst(raw[i + 2 : end - 1])  # its command is judged; its value is a fd
                parts.lit("/dev/fd/63")
                i = end
            else:
                parts.lit(c)
                i += 1

    def _dquoted(self, i: int) -> int:
        raw, parts, j = self.raw, self.parts, i + 1
        while j < len(raw):
            c = raw[j]
            if c == '"':
                return j + 1
            if c == "\\" and j + 1 < len(raw) and raw[j + 1] in '$`"\\\n':
                if raw[j + 1] != "\n":
                    parts.lit(raw[j + 1])
                j += 2
            elif c in "$`":
                j = self._dollar(j, split=False)
            else:
                parts.lit(c)
                j += 1
        raise Unanalysable("an unterminated double quote")

    def _dollar(self, i: int, *, split: bool) -> int:
        raw, ex = self.raw, self.ex
        if raw[i] == "`":
            end = _backtick_end(raw, i)
            inner = re.sub(r"\\([$`\\])", r"\1", raw[i + 1 : end - 1])
            self.parts.alts(ex.subst(inner), f"`{inner}`", split=split)
            return end
        if raw.startswith("$((", i):
            raise Unanalysable("arithmetic expansion $((...)) is not supported")
        if raw.startswith("$(", i):
            end = matching(raw, i + 1, "(", ")")
            inner = raw[i + 2 : end - 1]
            self.parts.alts(ex.subst(inner), f"$({inner})", split=split)
            return end
        if raw.startswith("${", i):
            end = matching(raw, i + 1, "{", "}")
            inner = raw[i + 2 : end - 1]
            self.parts.alts(self._param(inner), "${" + inner + "}", split=split)
            return end
        m = _NAME.match(raw, i + 1)
        if m:
            self.parts.alts(ex.var(m.group(0)), "$" + m.group(0), split=split)
            return m.end()
        if i + 1 < len(raw) and (raw[i + 1].isdigit() or raw[i + 1] in "@*#?$!-"):
            name = raw[i + 1]
            self.parts.alts(ex.var(name), "$" + name, split=split)
            return i + 2
        self.parts.lit("$")
        return i + 1

    def _tilde(self, i: int) -> int:
        raw = self.raw
        m = re.match(r"~([A-Za-z0-9_.+-]*)", raw[i:])
        assert m
        name, end = m.group(1), i + len(m.group(0))
        if end < len(raw) and raw[end] not in "/:":
            self.parts.lit("~")  # `~foo"bar"` or `~$x`: no tilde expansion
            return i + 1
        if name == "":
            self.parts.alts(self.ex.var("HOME"), "~", split=False)
        elif name == "+":
            self.parts.alts(self.ex.var("PWD"), "~+", split=False)
        elif name == "-":
            self.parts.alts(self.ex.var("OLDPWD"), "~-", split=False)
        else:
            try:
                self.parts.lit(pwd.getpwnam(name).pw_dir)
            except KeyError:
                self.parts.lit(m.group(0))
        return end

    def _param(self, inner: str) -> Values:
        ex = self.ex
        if inner.startswith("#") and len(inner) > 1:
            return frozenset({"0"})  # a length: a number, never a path
        if inner.startswith("!"):
            return None  # indirection
        m = _NAME.match(inner) or re.match(r"[0-9@*#?$!-]", inner)
        if not m:
            return None
        name, rest = m.group(0), inner[m.end() :]
        value = ex.var(name)
        if rest == "":
            return value
        for op in (":-", ":=", "-", "="):
            if rest.startswith(op):
                word = ex.string(rest[len(op) :])
                return None if value is None or word is None else value | word
        for op in (":+", "+"):
            if rest.startswith(op):
                word = ex.string(rest[len(op) :])
                return None if word is None else word | {""}
        for op in (":?", "?"):
            if rest.startswith(op):
                return value
        for op in ("%%", "##", "%", "#"):
            if rest.startswith(op):
                pats = ex.string(rest[len(op) :])
                if value is None or pats is None:
                    return None
                return frozenset(_strip(v, p, op) for v in value for p in pats)
        for op in ("^^", ",,", "^", ","):
            if rest == op and value is not None:
                up = op.startswith("^")
                if len(op) == 2:
                    return frozenset(v.upper() if up else v.lower() for v in value)
                return frozenset((v[:1].upper() if up else v[:1].lower()) + v[1:] for v in value)
        m = re.fullmatch(r":\s*(-?\d+)(?::\s*(-?\d+))?", rest)
        if m and value is not None:
            off = int(m.group(1))
            length = None if m.group(2) is None else int(m.group(2))
            return frozenset(_substr(v, off, length) for v in value)
        return None  # ${x/a/b}, arrays, ...: not modelled


def _strip(value: str, pattern: str, op: str) -> str:
    n = len(value)
    if op in ("%", "%%"):  # suffixes: shortest first for %, longest first for %%
        starts = range(n, -1, -1) if op == "%" else range(0, n + 1)
        for s in starts:
            if fnmatch.fnmatchcase(value[s:], pattern):
                return value[:s]
        return value
    ends = range(0, n + 1) if op == "#" else range(n, -1, -1)
    for e in ends:
        if fnmatch.fnmatchcase(value[:e], pattern):
            return value[e:]
    return value


def _substr(value: str, off: int, length: int | None) -> str:
    start = off if off >= 0 else max(0, len(value) + off)
    if length is None:
        return value[start:]
    end = start + length if length >= 0 else len(value) + length
    return value[start:end]


def brace_expand(text: str, limit: int = MAX_VALUES) -> list[str]:
    """`{a,b}` alternatives (bash; dash leaves them alone, so the caller keeps `text` too)."""
    out: list[str] = []
    todo = [text]
    while todo and len(out) < limit:
        t = todo.pop()
        m = re.search(r"\{([^{}]*,[^{}]*)\}", t)
        if not m:
            out.append(t)
            continue
        todo.extend(t[: m.start()] + alt + t[m.end() :] for alt in m.group(1).split(","))
    return out

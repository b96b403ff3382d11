"""The workspace guard: judges the words the shell will see, not the command's text.

The command is parsed with bashlex (heredoc bodies taken out first: bashlex cannot read a
quoted delimiter), the tree is walked, and every word is expanded as the shell would expand
it (shell_words.py): quotes, escapes, `$'...'`, parameters (with the environment exec will
really pass, `$PWD` being the workspace, `${PWD%/*}` computed), `~`, `$(...)` (its command is
judged too; `pwd`, `dirname`, `basename`, `echo`, `realpath` are evaluated, any other output is
unknown), then braces and globs (matched against the workspace). Variables assigned in the
command, `for` lists and `cd` targets are tracked without regard to order (any value they
may take counts), in two passes.

A word of a command that takes paths is refused when one of its values is outside the
workspace (absolute, `..` components, or through a symlink from any directory the command
may `cd` to), or when it holds a part whose value cannot be known. A text check of every
value also catches paths inside code (`python -c "open('/etc/passwd')"`, `file://` URLs).
The arguments of commands that take no paths (`echo`, `printf`, `test`, ...) are not judged
(their redirections are). Setting IFS (but to whitespace), CDPATH, ENV or BASH_ENV is refused:
they change how words split, where `cd` goes, what a shell runs first; so is a relative `cd`
while CDPATH is set, and a shell reading its script from a pipe (`curl ... | sh`). `sh -c`, `bash -c`, `eval`, `trap` and `alias` bodies are analysed
as commands. Whatever bashlex or this walker cannot model (arithmetic, `case`, `[[`, arrays,
`time`, an unknown node) is refused with a message that says the guard could not analyse it.

What it cannot stop: paths built at run time from data (`printf '\\057etc' | xargs cat`,
a script in the workspace, `python -c` code that computes a path), programs that read
outside on their own (a config file in $HOME), and harm inside the workspace. That is what
the sandbox (sandbox.py) is for.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from picobot_tui.core.tools.base import ToolError
from picobot_tui.core.tools.shell_words import (
    UNKNOWN_CHAR,
    Expander,
    Unanalysable,
    Value,
    Values,
    brace_expand,
)

_MAX_DEPTH = 8  # nested sh -c / eval / $(...)
_MAX_GLOB = 5000  # matches of one pattern before the guard gives up
_MAX_VAR_VALUES = 64
SAFE_DEVICES = {
    "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout",
    "/dev/stderr", "/dev/tty",
}  # fmt: skip
# Commands whose arguments are never paths they open: their words are not judged (the
# commands inside their $(...) are, and so are their redirections).
NO_PATH_ARGS = {
    "echo", "printf", "true", "false", ":", "test", "[", "expr", "sleep", "seq", "exit",
    "return", "shift", "break", "continue", "wait", "unset", "set", "type", "which", "hash",
    "umask", "basename", "dirname", "let", "kill", "jobs", "read", "export", "local",
    "declare", "typeset", "readonly", "getopts", "mapfile", "readarray",
}  # fmt: skip
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "su", "fish"}
_ASSIGNING = {"read", "mapfile", "readarray", "getopts"}
# Variables that change how words split (IFS), where `cd` looks (CDPATH), or what a shell
# sources first (ENV, BASH_ENV): setting one is refused.
_RESHAPING = {"IFS", "CDPATH", "ENV", "BASH_ENV"}
_DECLARING = {"export", "local", "declare", "typeset", "readonly", "alias"}
# Where system programs live: naming one as the command (`/usr/bin/env python3`) runs it,
# which reads nothing of the user's.
_SYSTEM_BIN = ("/usr/", "/bin/", "/sbin/")
_GLOB_CHARS = re.compile(r"[*?\[]")
_INTERPRETER = re.compile(r"(python|perl|ruby|node|php|lua|Rscript|awk|gawk|tclsh)[0-9.]*")

# The text check, run on each expanded value: paths that code or URLs carry inside a word.
_WORD_START = r"""(?<![^\s=:'"(<>|;&`{,])"""
_DOTDOT_RE = re.compile(r"""(?<![^\s=:'"(<>|;&`{,/])\.\.(?=$|[/\s'"<>|;&`)}])""")
_TILDE_RE = re.compile(_WORD_START + "~")
_ABS_RE = re.compile(_WORD_START + r"""/[^\s'"<>|;&`(){},]*""")
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):$")


class Refused(Exception):
    """The command reaches outside the workspace (the message says how)."""


def refusal(what: str, workspace: Path) -> ToolError:
    return ToolError(
        f"command refused: {what}. restrictToWorkspace is on, so exec stays in the workspace "
        f"{workspace}: use paths relative to it."
    )


def inside(path: str | Path, workspace: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(workspace)
    except (OSError, ValueError):
        return False


def check_confined(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> None:
    """Raise ToolError when the command may reach outside `workspace` (resolved), or when
    the guard cannot tell (see the module docstring)."""
    env = os.environ if env is None else env
    try:
        analysis = Analysis(workspace, env)
        analysis.run(command, collect_only=True)  # pass 1: variables and cd targets
        analysis.run(command, collect_only=False)
    except Refused as e:
        raise refusal(str(e), workspace) from None
    except Unanalysable as e:
        raise refusal(
            f"the workspace guard could not analyse it ({e}), so it cannot tell whether the "
            "command stays in the workspace; write it more simply (one command per line, no "
            "arithmetic, `case`, `[[ ]]` or arrays)",
            workspace,
        ) from None
    except RecursionError:
        raise refusal(
            "the workspace guard could not analyse it (nested too deeply)", workspace
        ) from None


# -- heredocs -------------------------------------------------------------------------------


def take_heredocs(command: str, base: int = 0) -> tuple[str, list[tuple[str, bool]]]:
    prepared, _, bodies = prepare(command, base)
    return prepared, bodies


def prepare(command: str, base: int = 0) -> tuple[str, str, list[tuple[str, bool]]]:
    """The command with every heredoc body blanked (same length, so positions hold) and its
    `<<DELIM` made a plain `<` redirect of the word `h<N>___` (N = base + its index, when it
    fits; else `___`); plus each (body, expands).

    Heredocs are found in command context only: at the top, inside `$(...)` (also within
    double quotes: `git commit -m "$(cat <<'EOF' ...)"`), not in quoted text.

    `prepare` also returns the text bashlex is given: the same, with the inside of single
    quotes (and of `$'...'`) masked, since bashlex 0.18 looks for `${...}` there too and an
    unclosed `'${'` makes it allocate without end."""
    out = list(command)
    mask: list[int] = []  # positions inside single quotes
    bodies: list[tuple[str, bool]] = []
    pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, expands)
    stack: list[list[Any]] = [["cmd", 0]]  # ("cmd", open parens) / ("dq", 0) frames
    i, n = 0, len(command)
    at_word_start = True
    while i < n:
        c = command[i]
        mode = stack[-1]
        if c == "\\":
            i += 2
            at_word_start = False
            continue
        if mode[0] == "dq":
            if c == '"':
                stack.pop()
            elif command.startswith("$(", i):
                stack.append(["cmd", 0])
                i += 2
                at_word_start = True
                continue
            i += 1
            continue
        if c == "'":
            if i > 0 and command[i - 1] == "$":  # $'...': backslash escapes a quote
                end = i + 1
                while end < n and command[end] != "'":
                    end += 2 if command[end] == "\\" else 1
                end = min(end, n)
            else:
                end = command.find("'", i + 1)
                end = n if end < 0 else end
            mask.extend(range(i + 1, end))
            i = end + 1
            continue
        if c == '"':
            stack.append(["dq", 0])
            i += 1
            continue
        if c == "(":
            mode[1] += 1
        elif c == ")" and len(stack) > 1:
            if mode[1] == 0:
                stack.pop()
            else:
                mode[1] -= 1
        if c == "#" and at_word_start:
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "\n":
            i += 1
            for delim, strip, expands in pending:
                start = i
                body: list[str] = []
                while i < n:
                    end = command.find("\n", i)
                    line = command[i : n if end < 0 else end]
                    i = n if end < 0 else end + 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
                    body.append(line)
                for k in range(start, i):
                    if out[k] != "\n":
                        out[k] = " "
                bodies.append(("\n".join(body), expands))
            pending = []
            at_word_start = True
            continue
        if command.startswith("<<", i) and not command.startswith("<<<", i):
            i = _heredoc_operator(command, i, out, pending, base + len(bodies) + len(pending))
            continue
        at_word_start = c in " \t;&|()"
        i += 1
    prepared = "".join(out)
    masked = list(prepared)
    for k in mask:
        if masked[k] != "\n":
            masked[k] = "x"
    return prepared, "".join(masked), bodies


def _heredoc_operator(
    command: str, i: int, out: list[str], pending: list[tuple[str, bool, bool]], index: int
) -> int:
    """Read `<<[-]WORD` at i, note it in `pending`, rewrite it in `out`; return the end."""
    n = len(command)
    j = i + 2
    strip = command.startswith("-", j)
    j += strip
    while j < n and command[j] in " \t":
        j += 1
    k = j
    while k < n and command[k] not in " \t\n;&|<>()":
        if command[k] in "'\"":
            close = command.find(command[k], k + 1)
            k = n if close < 0 else close + 1
        else:
            k += 2 if command[k] == "\\" else 1
    k = min(k, n)
    word = command[j:k]
    if not word:
        raise Unanalysable("a heredoc without a delimiter")
    expands = not any(q in word for q in "'\"\\")
    pending.append((re.sub(r"""['"\\]""", "", word), strip, expands))
    # `<<-WORD` -> `<h7____`: a plain redirect bashlex reads, naming the body it stands for.
    room = k - i - 1
    tag = f"h{index}" if len(f"h{index}") <= room else ""
    for m in range(i + 1, k):
        out[m] = "_"
    for m, ch in enumerate(tag):
        if i + 1 + m < len(out):
            out[i + 1 + m] = ch
    return k


# -- the walk -------------------------------------------------------------------------------


class Analysis:
    """Variables, possible working directories, and the judgement of each word."""

    def __init__(self, workspace: Path, env: Mapping[str, str]) -> None:
        self.ws = workspace
        self.env = env
        self.vars: dict[str, frozenset[str] | None] = {k: frozenset({v}) for k, v in env.items()}
        self.vars.pop("OLDPWD", None)
        self.cwds: set[Path] = {workspace}
        self.collect_only = True
        self.depth = 0
        self.heredocs: list[tuple[str, bool]] = []
        self.expander = Expander(self.var, self.subst)

    # variables

    def var(self, name: str) -> Values:
        if name == "PWD":
            return frozenset(str(c) for c in self.cwds)
        if name == "OLDPWD":  # unset (exec never passes it) until a `cd`
            return frozenset(str(c) for c in self.cwds) | {""}
        if name in "?#$!-":
            return frozenset({"0"})
        if name == "0":
            return frozenset({"/bin/sh"})
        if name.isdigit() or name in "@*":
            return None  # positional parameters: `set --`, functions, `sh -c '...' a b`
        if name not in self.vars:
            return frozenset({""})
        return self.vars[name]

    def assign(self, name: str, values: Values) -> None:
        harmless_ifs = name == "IFS" and values is not None and not any(v.strip() for v in values)
        if name in _RESHAPING and not harmless_ifs:  # `IFS= read -r line` only splits less
            raise Refused(
                f"setting {name} changes how the shell finds words or directories, which the "
                "guard does not follow"
            )
        old = self.vars.get(name, frozenset({""}))
        if values is None or old is None or len(old | values) > _MAX_VAR_VALUES:
            self.vars[name] = None
        else:
            self.vars[name] = old | values

    # entry points

    def run(self, command: str, *, collect_only: bool) -> None:
        self.collect_only = collect_only
        self.heredocs = []
        self.analyse(command)

    def analyse(self, command: str) -> None:
        if self.depth > _MAX_DEPTH:
            raise Unanalysable("commands nested too deeply")
        if not command.strip():
            return
        if "$((" in command or "((" in command.lstrip()[:2]:
            raise Unanalysable("arithmetic is not supported")
        prepared, masked, bodies = prepare(command, len(self.heredocs))
        self.heredocs.extend(bodies)
        import bashlex  # lazy: ~30 ms, needed only when exec runs

        try:
            trees = bashlex.parse(masked)
        except Exception as e:  # noqa: BLE001 - any parser failure means "cannot tell"
            raise Unanalysable(f"bashlex: {_short(e)}") from None
        self.depth += 1
        try:
            for tree in trees:
                self.node(tree, prepared)
            for body, expands in bodies:
                if expands and ("$(" in body or "`" in body):
                    self.analyse('echo "' + body.replace('"', '\\"') + '"')
        finally:
            self.depth -= 1

    def subst(self, inner: str) -> Values:
        """Analyse the command of a `$(...)`; its output, when it can be computed."""
        self.analyse(inner)
        return self.evaluate(inner)

    # nodes

    def node(self, n: Any, src: str) -> None:
        kind = n.kind
        if kind in ("operator", "reservedword", "pipe"):
            return
        if kind == "command":
            self.command(n, src)
        elif kind == "pipeline":
            stages = [p for p in n.parts if p.kind not in ("pipe", "reservedword")]
            for p in stages[1:]:
                self.piped_shell(p, src)
            for p in n.parts:
                self.node(p, src)
        elif kind in ("list", "if", "while", "until"):
            for p in n.parts:
                self.node(p, src)
        elif kind == "compound":
            for p in n.list:
                self.node(p, src)
            for r in getattr(n, "redirects", []) or []:
                self.redirect(r, src)
        elif kind == "for":
            self.for_loop(n, src)
        elif kind == "function":
            for p in n.parts[1:]:
                if p.kind != "reservedword":
                    self.node(p, src)
        else:
            raise Unanalysable(f"the shell construct {kind!r} is not supported")

    def for_loop(self, n: Any, src: str) -> None:
        parts = n.parts
        name = parts[1].word
        words = []
        if len(parts) > 2 and parts[2].kind == "reservedword" and parts[2].word == "in":
            for p in parts[3:]:
                if p.kind != "word":
                    break
                words.append(p)
            values: set[str] | None = set()
            for w in words:
                for v in self.values(w, src):
                    if v.unknown:
                        values = None
                        break
                    assert values is not None
                    values.update(self.globbed(v.text) if _GLOB_CHARS.search(v.text) else [])
                    values.add(v.text)
                if values is None:
                    break
            self.assign(name, None if values is None else frozenset(values))
        else:
            self.assign(name, self.var("@"))
        for p in parts:
            if p.kind not in ("word", "reservedword"):
                self.node(p, src)

    def values(self, w: Any, src: str, *, assignment: bool = False) -> list[Value]:
        return self.expander.word(src[w.pos[0] : w.pos[1]], assignment=assignment)

    def command(self, n: Any, src: str) -> None:
        words: list[tuple[Any, list[Value]]] = []
        for p in n.parts:
            if p.kind == "assignment":
                self.assignment(src[p.pos[0] : p.pos[1]])
            elif p.kind == "word":
                words.append((p, self.values(p, src)))
            elif p.kind == "redirect":
                self.redirect(p, src)
            else:
                raise Unanalysable(f"the shell construct {p.kind!r} is not supported")
        if not words:
            return
        first = words[0][1]
        self.fed_heredocs(n, src, first)
        if any(v.unknown for v in first):
            self.judge_unknown(first, "the command's name")
            return
        names = {os.path.basename(v.text) for v in first}
        name = next(iter(names)) if len(names) == 1 else ""
        args = words[1:]
        raw_args = [src[p.pos[0] : p.pos[1]] for p, _ in args]
        if name in ("cd", "pushd"):
            self.cd(args)
            return
        if name in _DECLARING:
            for raw in raw_args:
                if re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=", raw):
                    if name == "alias":
                        body = self.expander.string(raw.split("=", 1)[1])
                        self.script(body, "an alias")
                    else:
                        self.assignment(raw)
        if name in _ASSIGNING:
            for raw in raw_args:
                if _is_name(raw):
                    self.assign(raw, None)
        if name == "printf" and raw_args[:1] == ["-v"] and len(raw_args) > 1:
            self.assign(raw_args[1], None)
        if name in ("eval", "trap") and args:
            pieces = [w for _, w in (args if name == "eval" else args[:1])]
            for combo in itertools.islice(itertools.product(*pieces), 64):
                if any(v.unknown for v in combo):
                    self.judge_unknown(list(combo), f"the text `{name}` runs")
                self.script(frozenset({" ".join(v.text for v in combo)}), f"the text {name} runs")
        self.shell_scripts(words)
        if (name in SHELLS or name in (".", "source")) and not self.collect_only:
            for _, vals in args:
                if any(v.text.startswith("/dev/fd/") for v in vals):
                    raise Refused(f"`{name}` would run a script from a process substitution")
        if name in NO_PATH_ARGS:
            return
        for idx, (_, vals) in enumerate(words):
            for v in vals:
                self.judge(v, command_name=idx == 0)

    def piped_shell(self, n: Any, src: str) -> None:
        """`... | sh`: a shell reading its script from a pipe runs text nobody can see."""
        if n.kind != "command" or self.collect_only:
            return
        words = [p for p in n.parts if p.kind == "word"]
        if not words:
            return
        name = os.path.basename(src[words[0].pos[0] : words[0].pos[1]].strip("'\""))
        rest = [src[w.pos[0] : w.pos[1]] for w in words[1:]]
        if name in SHELLS - {"su"} and all(r.startswith("-") and "c" not in r for r in rest):
            raise Refused(
                f"`{name}` would run a script read from a pipe, which the guard cannot see"
            )

    def fed_heredocs(self, n: Any, src: str, first: list[Value]) -> None:
        """A heredoc is a script when a shell reads it, code when an interpreter does."""
        names = {os.path.basename(v.text) for v in first if not v.unknown}
        for p in n.parts:
            target = getattr(p, "output", None) if p.kind == "redirect" else None
            if p.kind != "redirect" or p.type != "<" or getattr(target, "kind", "") != "word":
                continue
            assert target is not None  # a "word" kind above
            m = re.fullmatch(r"h(\d+)_*", src[target.pos[0] : target.pos[1]])
            if not m or int(m.group(1)) >= len(self.heredocs):
                continue
            body, _ = self.heredocs[int(m.group(1))]
            if names & SHELLS:
                self.analyse(body)
            elif any(_INTERPRETER.fullmatch(name) for name in names):
                for line in body.splitlines():
                    self.text_check(line)

    def shell_scripts(self, words: list[tuple[Any, list[Value]]]) -> None:
        """`sh -c SCRIPT` (anywhere in the words: `sudo sh -c`, `find -exec bash -c`)."""
        texts = [
            next(iter({v.text for v in vals})) if len({v.text for v in vals}) == 1 else None
            for _, vals in words
        ]
        for i, t in enumerate(texts):
            if t is None or os.path.basename(t) not in SHELLS:
                continue
            for j in range(i + 1, len(texts)):
                flag = texts[j]
                if flag is None or not flag.startswith("-"):
                    break
                if re.fullmatch(r"-[A-Za-z]*c[A-Za-z]*", flag) and j + 1 < len(words):
                    vals = words[j + 1][1]
                    self.judge_unknown(vals, "the script given to a shell with -c")
                    self.script(frozenset(v.text for v in vals), "the script of sh -c")
                    break

    def script(self, bodies: Values, what: str) -> None:
        if bodies is None:
            if not self.collect_only:
                raise Refused(f"{what} depends on a value the guard cannot know")
            return
        for body in bodies:
            self.analyse(body)

    def assignment(self, raw: str) -> None:
        name, _, value = raw.partition("=")
        name = name.rstrip("+")
        vals = self.expander.word(value, assignment=True)
        known = None if any(v.unknown for v in vals) else frozenset(v.text for v in vals)
        self.assign(name, known)
        if self.collect_only:
            return
        # A prefix assignment can point a program outside (GIT_DIR=/elsewhere git log): judge
        # the value's text as the old guard did, leaving out what *PATH variables bring in.
        quiet = Expander(
            lambda n: frozenset({""}) if n.endswith("PATH") else self.var(n), self.evaluate
        )
        for v in quiet.word(value, assignment=True):
            for piece in v.text.split(":"):
                self.text_check(piece.replace(UNKNOWN_CHAR, "x"))

    def redirect(self, r: Any, src: str) -> None:
        target = getattr(r, "output", None)
        if target is None or isinstance(target, int) or getattr(target, "kind", "") != "word":
            return
        vals = self.values(target, src)
        if r.type in (">&", "<&") and all(re.fullmatch(r"\d+-?|-", v.text) for v in vals):
            return
        if r.type == "<<<":  # a here-string is data
            return
        for v in vals:
            self.judge(v, redirect=True)

    def cd(self, args: list[tuple[Any, list[Value]]]) -> None:
        targets: list[list[Value]] = []
        for p, vals in args:
            if not targets and re.fullmatch(r"-[LPe@]+|--", p.word or ""):
                continue  # options, and the `--` that ends them
            targets.append(vals)
        if self.collect_only:
            pass
        elif not targets:
            homes = self.var("HOME")
            if homes is None or not all(h and inside(h, self.ws) for h in homes):
                raise Refused("a bare `cd` goes to the home directory, outside the workspace")
            return
        elif ((cdpath := self.var("CDPATH")) is None or cdpath - {""}) and any(
            not v.text.startswith(("/", "./")) for v in targets[0]
        ):
            raise Refused("CDPATH is set, so `cd` may go to a directory outside")
        if not targets:
            return
        vals = targets[0]
        if any(v.text == "-" for v in vals) and not self.collect_only:
            raise Refused("`cd -` goes to the previous directory, outside the workspace")
        for v in vals:
            self.judge(v)
            if v.unknown:
                continue
            for base in list(self.cwds):
                p = Path(os.path.realpath(base / v.text))
                if p.is_relative_to(self.ws) and len(self.cwds) < _MAX_VAR_VALUES:
                    self.cwds.add(p)

    # evaluation of $(...)

    def evaluate(self, inner: str) -> Values:
        """The output of a few pure commands; None for anything else."""
        text = inner.strip()
        doc = re.fullmatch(r"cat\s*<\s*h(\d+)_*", text)
        if doc and int(doc.group(1)) < len(self.heredocs):
            body, expands = self.heredocs[int(doc.group(1))]
            return None if expands and ("$" in body or "`" in body) else frozenset({body})
        m = re.fullmatch(r"(pwd|dirname|basename|echo|realpath|readlink\s+-f)(\s+.*)?", text, re.S)
        if not m or re.search(r"[;&|<>`\n]|\$\(", text):
            return None
        cmd = m.group(1).split()[0]
        arg_raw = (m.group(2) or "").strip()
        if cmd == "pwd":
            return frozenset(str(c) for c in self.cwds)
        args = self.expander.string(arg_raw) if arg_raw else frozenset({""})
        if args is None:
            return None
        if cmd == "echo":
            return frozenset(" ".join(a.split()) for a in args)
        out = set()
        for a in args:
            if not a or a.startswith("-") or " " in a:
                return None
            if cmd == "dirname":
                out.add(os.path.dirname(a.rstrip("/")) or ("/" if a.startswith("/") else "."))
            elif cmd == "basename":
                out.add(os.path.basename(a.rstrip("/")))
            else:
                out.update(os.path.realpath(c / a) for c in self.cwds)
        return frozenset(out)

    # judgement

    def judge_unknown(self, vals: list[Value], what: str) -> None:
        if self.collect_only:
            return
        for v in vals:
            if v.unknown:
                raise Refused(
                    f"{what} depends on {v.unknown[0]}, whose value the guard cannot know"
                )

    def judge(self, v: Value, *, command_name: bool = False, redirect: bool = False) -> None:
        if self.collect_only:
            return
        if v.unknown:
            raise Refused(
                f"{'a redirection' if redirect else 'an argument'} depends on {v.unknown[0]}, "
                "whose value the guard cannot know"
            )
        texts = [v.text]
        if v.split:
            texts += v.text.split()
        for t in texts:
            for b in {t, *brace_expand(t)}:
                self.judge_text(b, command_name=command_name)

    def judge_text(self, t: str, *, command_name: bool = False) -> None:
        if not t:
            return
        if t.startswith("/"):
            if command_name and t.startswith(_SYSTEM_BIN) and os.access(t, os.X_OK):
                return
            self.judge_path(t)
            return
        self.text_check(t)
        if t.startswith("-"):
            if "=" in t:
                self.judge_text(t.split("=", 1)[1])
            return
        if "://" in t:
            return
        self.judge_path(t)

    def judge_path(self, t: str) -> None:
        if t in SAFE_DEVICES or t.startswith("/dev/fd/"):
            return
        if ".." in t.split("/"):
            raise Refused("`..` path components can lead outside the workspace")
        for base in [Path("/")] if t.startswith("/") else sorted(self.cwds):
            self.judge_resolved(t, base)
            if _GLOB_CHARS.search(t):
                for match in self.globbed(t, base):
                    self.judge_resolved(match, base)

    def judge_resolved(self, t: str, base: Path) -> None:
        if t in SAFE_DEVICES or t.startswith("/dev/fd/"):
            return
        if not inside(base / t, self.ws):
            via = " (through a symlink)" if not t.startswith("/") else ""
            raise Refused(f"{t!r} resolves outside the workspace{via}")

    def globbed(self, pattern: str, base: Path | None = None) -> list[str]:
        for comp in pattern.split("/"):
            if _GLOB_CHARS.search(comp) and comp[:1] not in "*?" and _matches_dotdot(comp):
                raise Refused(f"the glob {comp!r} can match `..`, outside the workspace")
        root = None if pattern.startswith("/") else str(base or self.ws)
        try:
            found = list(itertools.islice(glob.iglob(pattern, root_dir=root), _MAX_GLOB + 1))
        except (OSError, ValueError, re.error):
            return []
        if len(found) > _MAX_GLOB and not self.collect_only:
            raise Refused(f"the glob {pattern!r} matches too many files to check")
        return found

    def text_check(self, t: str) -> None:
        """Paths inside a value (code, URLs, `a=b` options), as the old textual guard saw
        them."""
        if self.collect_only:
            return
        if _DOTDOT_RE.search(t):
            raise Refused("`..` path components can lead outside the workspace")
        if _TILDE_RE.search(t):
            raise Refused("`~` is the home directory, outside the workspace")
        for m in _ABS_RE.finditer(t):
            path, start = m.group(0), m.start()
            if path.startswith("//") and start > 0 and t[start - 1] == ":":
                scheme = _SCHEME_RE.search(t, 0, start)
                if not (scheme and scheme.group(1).lower() == "file"):
                    continue  # a URL: scheme://host/...
                # file://[host]/path names a local file (curl, wget, urllib read it).
                path = "/" + path[2:].partition("/")[2]
            if path in SAFE_DEVICES or path.startswith("/dev/fd/"):
                continue
            if not inside(path, self.ws):
                raise Refused(f"{path} is outside the workspace")


def _matches_dotdot(comp: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase("..", comp)


def _is_name(s: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) is not None


def _short(e: Exception) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, NotImplementedError):
        text = f"not supported: {text}"
    return text.splitlines()[0][:160]

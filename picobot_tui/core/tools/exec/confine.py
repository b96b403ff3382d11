"""The workspace guard: judges the words the shell will see, not the command's text.

The command is parsed with bashlex (heredoc bodies taken out first: bashlex cannot read a
quoted delimiter), the tree is walked, and every word is expanded as the shell would expand
it (words.py): quotes, escapes, `$'...'`, parameters (with the environment exec will
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

import itertools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from picobot_tui.core.tools.exec.heredoc import prepare
from picobot_tui.core.tools.exec.shell_paths import GLOB_CHARS, PathRules, Refused, inside, refusal
from picobot_tui.core.tools.exec.words import (
    UNKNOWN_CHAR,
    Expander,
    Unanalysable,
    Value,
    Values,
)

_MAX_DEPTH = 8  # nested sh -c / eval / $(...)
_MAX_VAR_VALUES = 64
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
_INTERPRETER = re.compile(r"(python|perl|ruby|node|php|lua|Rscript|awk|gawk|tclsh)[0-9.]*")


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


def take_heredocs(command: str, base: int = 0) -> tuple[str, list[tuple[str, bool]]]:
    """The command with its heredoc bodies blanked, and each (body, expands)."""
    prepared, _, bodies = prepare(command, base)
    return prepared, bodies


# -- the walk -------------------------------------------------------------------------------


class Analysis(PathRules):
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
                    values.update(self.globbed(v.text) if GLOB_CHARS.search(v.text) else [])
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


def _is_name(s: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) is not None


def _short(e: Exception) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, NotImplementedError):
        text = f"not supported: {text}"
    return text.splitlines()[0][:160]

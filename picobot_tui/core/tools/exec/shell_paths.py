"""The path rules of the workspace guard: whether one expanded word may name a file outside
the workspace (absolute, `..`, through a symlink, a glob's matches, paths inside code or
`file://` URLs). The walk in confine.py decides which words are judged."""

from __future__ import annotations

import glob
import itertools
import os
import re
from pathlib import Path

from picobot_tui.core.tools.base import ToolError
from picobot_tui.core.tools.exec.words import Value, brace_expand

_MAX_GLOB = 5000  # matches of one pattern before the guard gives up
SAFE_DEVICES = {
    "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout",
    "/dev/stderr", "/dev/tty",
}  # fmt: skip
# Where system programs live: naming one as the command (`/usr/bin/env python3`) runs it,
# which reads nothing of the user's.
_SYSTEM_BIN = ("/usr/", "/bin/", "/sbin/")
GLOB_CHARS = re.compile(r"[*?\[]")

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


class PathRules:
    """Judges expanded words against the workspace `ws`, from each possible cwd in `cwds`;
    nothing is refused while `collect_only` (the first pass only gathers values)."""

    ws: Path
    cwds: set[Path]
    collect_only: bool

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
            if GLOB_CHARS.search(t):
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
            if GLOB_CHARS.search(comp) and comp[:1] not in "*?" and _matches_dotdot(comp):
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

"""Checks `exec` makes on a command before running it. They are best-effort, NOT a sandbox.

1. Deny patterns (always on): commands that destroy a system or a repository's history —
   `rm -rf /` or `~`, `mkfs`, `dd` onto a device, writes to `/dev/sd*`, fork bombs,
   shutdown/reboot, recursive `chmod`/`chown` of `/`, `git push --force` — plus the regular
   expressions in `tools.exec.denyPatterns`.
2. Workspace guard (with `restrictToWorkspace`): refuses commands that obviously reach outside
   the workspace — absolute paths outside it, `..` path components, `~`, bare `cd` / `cd -`,
   path-valued environment variables (`$HOME`, `$TMPDIR`, any `$VAR` whose value is a path
   outside), and relative paths that resolve outside through a symlink. It reads the command
   as text (including inside `$(...)` and backticks); it does not parse or run the shell.

What it cannot stop: anything that builds a path at run time (`printf '\\x2fetc'`, base64,
`python -c` code that computes a path), programs that read outside on their own, network
access, or a command that is harmful inside the workspace. The real boundary is the user:
exec always needs approval unless `tools.approval` is `auto`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from picobot_tui.core.tools.base import ToolError

# Start of a simple command: line start, after ; & | ( ` $( {, optionally sudo/exec/command.
_CMD = r"(?:^|[;&|(`{\n]|\$\()\s*(?:(?:sudo|doas|exec|command|nohup|time)(?:\s+-\S+)*\s+)*"
# `rm` with a recursive flag anywhere among its options.
_RM_R = r"\brm\s+(?:-\S+\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?:\s+-\S+)*\s+"
_TOP = r"""['"]?(?:/+\*?|~/?\*?|\$\{?HOME\}?/?\*?)['"]?(?=$|\s|[;&|)])"""

BUILTIN_DENY: tuple[tuple[str, str], ...] = (
    (_RM_R + r"(?:\S+\s+)*" + _TOP, "recursive rm of / or the home directory"),
    (r"\brm\b[^;&|\n]*--no-preserve-root", "rm --no-preserve-root"),
    (_CMD + r"(?:mkfs(?:\.\w+)?|wipefs|fdisk|sfdisk|parted|mkswap)\b", "formatting a disk"),
    (r"\bdd\b[^;&|\n]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)", "dd onto a device"),
    (r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/)", "writing to a block device"),
    (r"(\b\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&", "a fork bomb"),
    (_CMD + r"(?:shutdown|reboot|poweroff|halt|init\s+[06]|telinit\s+[06])\b", "shutdown/reboot"),
    (r"\bsystemctl\s+(?:\S+\s+)*(?:poweroff|reboot|halt|kexec)\b", "shutdown/reboot"),
    (
        r"\bch(?:mod|own|grp)\s+(?:\S+\s+)*(?:-[a-zA-Z]*R[a-zA-Z]*|--recursive)\s+(?:\S+\s+)*"
        r"""['"]?/+['"]?(?=$|\s|[;&|)])""",
        "recursive chmod/chown of /",
    ),
    (
        r"\bgit\s+(?:-\S+\s+)*push\b[^;&|\n]*\s(?:--force(?!-)|-[a-zA-Z]*f[a-zA-Z]*\b)",
        "git push --force",
    ),
)
_BUILTIN = [(re.compile(p), why) for p, why in BUILTIN_DENY]


def check_denied(command: str, extra_patterns: Iterable[str] = ()) -> None:
    """Raise ToolError when the command matches a built-in or configured deny pattern."""
    for rx, why in _BUILTIN:
        if rx.search(command):
            raise ToolError(
                f"command refused: it looks like {why}, which exec never runs "
                "(built-in deny pattern). Ask the user to run it themselves if it is intended."
            )
    for pattern in extra_patterns:
        try:
            hit = re.search(pattern, command)
        except re.error as e:
            raise ToolError(
                f"config tools.exec.denyPatterns has an invalid regular expression "
                f"{pattern!r}: {e}; exec is disabled until it is fixed"
            ) from None
        if hit:
            raise ToolError(
                f"command refused: it matches the configured deny pattern {pattern!r} "
                "(tools.exec.denyPatterns)"
            )


# Characters after which a word (and so a path or `~`) starts.
_WORD_START = r"""(?<![^\s=:'"(<>|;&`{,])"""
_DOTDOT_RE = re.compile(r"""(?<![^\s=:'"(<>|;&`{,/])\.\.(?=$|[/\s'"<>|;&`)}])""")
_TILDE_RE = re.compile(_WORD_START + "~")
_BARE_CD_RE = re.compile(r"(?:^|[;&|(`{\n]|\$\()\s*(?:cd|pushd|popd)(?:\s+-)?\s*(?=$|[;&|)`}\n])")
_ABS_RE = re.compile(_WORD_START + r"""/[^\s'"<>|;&`(){},]*""")
_WORD_SPLIT_RE = re.compile(r"""[\s=:'"(<>|;&`{}),$]+""")
_VAR_RE = re.compile(r"\$(?:\{(\w+)|(\w+))")
# Always refused: they name places outside the workspace whatever their value.
_PATH_VARS = re.compile(r"^(?:HOME|OLDPWD|TMPDIR|TMP|TEMP|USERPROFILE|PICOBOT_HOME|XDG_\w+)$")
_SAFE_DEVICES = {
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
}


def _refuse(what: str, workspace: Path) -> ToolError:
    return ToolError(
        f"command refused: {what}. restrictToWorkspace is on, so exec stays in the workspace "
        f"{workspace}: use paths relative to it."
    )


def _inside(path: str, workspace: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(workspace)
    except (OSError, ValueError):
        return False


def check_confined(command: str, workspace: Path, env: Mapping[str, str] | None = None) -> None:
    """Raise ToolError when the command obviously reaches outside `workspace` (resolved)."""
    env = os.environ if env is None else env
    if _DOTDOT_RE.search(command):
        raise _refuse("`..` path components can lead outside the workspace", workspace)
    if _TILDE_RE.search(command):
        raise _refuse("`~` is the home directory, outside the workspace", workspace)
    if _BARE_CD_RE.search(command):
        raise _refuse("a bare `cd` or `cd -` goes outside the workspace", workspace)
    for m in _VAR_RE.finditer(command):
        name = m.group(1) or m.group(2)
        if _PATH_VARS.match(name):
            raise _refuse(f"${name} points outside the workspace", workspace)
    _check_paths(command, workspace)
    # Variables whose value is an absolute path elsewhere ($VIRTUAL_ENV, $SOME_DIR, ...).
    # *PATH lists ($PATH, $PYTHONPATH) are left alone: `PATH=$PATH:bin` is ordinary.
    for m in _VAR_RE.finditer(command):
        name = m.group(1) or m.group(2)
        value = env.get(name)
        if name == "PWD" or name.endswith("PATH") or not value:
            continue
        for p in _ABS_RE.findall(value):
            if p not in _SAFE_DEVICES and not _inside(p, workspace):
                raise _refuse(f"${name} ({value!r}) is outside the workspace", workspace)
    # Relative words that resolve outside through a symlink in the workspace.
    for word in _WORD_SPLIT_RE.split(command)[:2000]:
        if not word or word.startswith(("/", "-", "~")) or "://" in word:
            continue
        if not _inside(str(workspace / word), workspace):
            raise _refuse(f"{word!r} resolves outside the workspace (through a symlink)", workspace)


_QUOTED_ABS_RE = re.compile(r"""(["'])(/[^"'\n]*)\1""")


_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):$")


def _check_paths(command: str, workspace: Path) -> None:
    # A quoted absolute path is one shell word even with spaces in it (a workspace under
    # "My Projects/"): judge it whole, and blank it out when it is inside.
    def inside_quoted(m: re.Match[str]) -> str:
        return m.group(1) * 2 if _inside(m.group(2), workspace) else m.group(0)

    command = _QUOTED_ABS_RE.sub(inside_quoted, command)
    for m in _ABS_RE.finditer(command):
        path = m.group(0)
        start = m.start()
        if path.startswith("//") and start > 0 and command[start - 1] == ":":
            scheme = _SCHEME_RE.search(command, 0, start)
            if not (scheme and scheme.group(1).lower() == "file"):
                continue  # a URL: scheme://host/...
            # file://[host]/path names a local file (curl, wget, urllib read it): judge it.
            path = "/" + path[2:].partition("/")[2]
        if path in _SAFE_DEVICES or path.startswith("/dev/fd/"):
            continue
        if not _inside(path, workspace):
            raise _refuse(f"{path} is outside the workspace", workspace)

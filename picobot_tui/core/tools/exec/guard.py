"""Checks `exec` makes on a command before running it.

1. Deny patterns (always on): commands that destroy a system or a repository's history —
   `rm -rf /` or `~`, `mkfs`, `dd` onto a device, writes to `/dev/sd*`, fork bombs,
   shutdown/reboot, recursive `chmod`/`chown` of `/`, `git push --force` — plus the regular
   expressions in `tools.exec.denyPatterns`. They read the command's text.
2. Workspace guard (with `restrictToWorkspace`): `check_confined`, in confine.py. It
   parses the command (bashlex) and judges the words the shell will see after quotes,
   escapes, parameters, `~`, command substitutions, braces and globs; what it cannot
   analyse it refuses. See that module for what it catches and what it cannot.

Neither is a sandbox: the sandbox (sandbox.py) is what holds when both are fooled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from picobot_tui.core.tools.base import ToolError
from picobot_tui.core.tools.exec.confine import check_confined

__all__ = ["BUILTIN_DENY", "check_confined", "check_denied"]

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

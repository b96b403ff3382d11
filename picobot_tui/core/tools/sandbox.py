"""Whether `exec` runs inside bubblewrap, and why (or why not).

`sandbox_status(exec_config)` is the one public question: front ends (the status bar,
`picobot doctor`) and exec itself ask it. Whether bwrap works is probed once per process and
bwrap path (running `bwrap` with the namespaces exec uses), then cached.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from picobot_tui.config import ExecConfig

SandboxMode = Literal["auto", "bwrap", "none"]

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: "
    '`sudo dnf install bubblewrap`), or set tools.exec.sandbox to "auto" or "none"'
)
_PROBE_TIMEOUT = 10.0  # seconds; bwrap starts in a few ms when it works


@dataclass(frozen=True)
class SandboxStatus:
    """What exec will do: `active` is True when commands run under bwrap."""

    mode: SandboxMode
    active: bool
    reason: str
    bwrap: str | None = None
    """Path of the bwrap binary used (None when inactive)."""


def find_bwrap() -> str | None:
    """The bwrap on PATH, or None."""
    return shutil.which("bwrap")


@lru_cache(maxsize=8)
def probe_bwrap(path: str) -> str | None:
    """Run bwrap once with the namespaces exec needs; None when it works, else why not."""
    argv = [
        path,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--clearenv",
        "--",
        "true",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"bwrap ({path}) cannot be run: {e}"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {done.returncode}"
        return f"bwrap ({path}) does not work here: {detail}"
    return None


def sandbox_status(exec_config: ExecConfig) -> SandboxStatus:
    """Whether exec will run sandboxed under `exec_config.sandbox`, with a one-line reason."""
    mode: SandboxMode = exec_config.sandbox
    if mode == "none":
        return SandboxStatus(mode, False, 'tools.exec.sandbox is "none": exec runs unsandboxed')
    path = find_bwrap()
    if path is None:
        why = "bwrap (bubblewrap) is not installed"
    else:
        why = probe_bwrap(path) or ""
        if not why:
            net = "with network" if exec_config.network else "no network"
            return SandboxStatus(mode, True, f"exec runs under bwrap ({path}, {net})", path)
    if mode == "bwrap":
        return SandboxStatus(mode, False, f"{why}: exec is refused; {INSTALL_HINT}")
    return SandboxStatus(mode, False, f"{why}: exec runs unsandboxed (guard and approvals only)")

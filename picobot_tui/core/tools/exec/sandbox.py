"""exec's sandbox: bubblewrap (`bwrap`), and whether exec runs inside it.

`sandbox_status(exec_config)` is the one public question: front ends (the status bar,
`picobot doctor`) and exec itself ask it. Whether bwrap works is probed once per process and
bwrap path (running `bwrap` with the same namespaces and flags exec uses), then cached.

The policy (`bwrap_argv`), for `tools.exec.sandbox` "auto" (when bwrap works) or "bwrap":

- `/` read-only; the workspace (its resolved path) read-write, at the same path;
- hidden behind an empty tmpfs: `/tmp` (a fresh one), `/home`, `/root`, `$HOME`,
  `$PICOBOT_HOME` (`~/.picobot`: config, keys, sessions), `/run/user/*` (session sockets:
  ssh-agent, gpg-agent, D-Bus); the Docker/Podman sockets are covered with /dev/null. When the
  workspace is inside a hidden directory it is bound again afterwards, and hidden directories
  inside the workspace are hidden again after that;
- toolchains on PATH (and $VIRTUAL_ENV) inside a hidden directory are shown again read-only
  (`~/.pyenv`, `~/.rustup`, `~/.nvm`, ..., or just the PATH entry: `~/.local/bin`), so the
  project's `python`, `cargo` or `node` still run (`toolchain_dirs`);
- a new `/dev` (null, zero, random, tty, ...) and `/proc` of its own PID namespace;
- new PID, IPC, UTS and cgroup namespaces, a new session (no TIOCSTI into the terminal),
  `--die-with-parent`, and (as root) every capability dropped: when the shell exits, the
  namespace's init exits and the kernel kills everything left, `setsid`/`nohup`/double forks
  included; when picobot dies, bwrap dies with it;
- no network (`--unshare-net`: only a loopback of its own) unless `tools.exec.network`;
- the environment is exec's (see env.py), passed as bwrap's own environment rather than
  `--setenv` arguments, so no value shows in `ps`.

What it stops: reading the user's files, keys and picobot's config/sessions; writing anywhere
but the workspace (and its private /tmp); reaching the network, including servers on the
host's 127.0.0.1; processes that outlive the call; signalling or ptracing host processes.
What it does not stop: anything done to the workspace itself (deleting it, planting a
Makefile or a git hook that runs later outside the sandbox); reading world-readable system
files (/etc, /usr, /opt, /var, /srv, /mnt are visible read-only, so are other users' files
outside /home); with `network: true`, any network use; CPU, memory and disk exhaustion (no
limits are set); sockets under /run other than those above; kernel exploits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from picobot_tui.core.settings import ExecConfig

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


def _namespace_flags(network: bool) -> list[str]:
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        flags.append("--unshare-net")
    flags += ["--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        # As root bwrap keeps every capability unless told otherwise: CAP_SYS_ADMIN could
        # simply unmount the tmpfs over $HOME. (Unprivileged bwrap keeps none already.)
        flags += ["--cap-drop", "ALL"]
    return flags


@lru_cache(maxsize=8)
def probe_bwrap(path: str, network: bool = False) -> str | None:
    """Run bwrap once with the flags exec uses; None when it works, else why not."""
    argv = [
        path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        *_namespace_flags(network), "--", "true",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"bwrap ({path}) cannot be run: {e}"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {done.returncode}"
        return f"bwrap ({path}) does not work here: {detail}"
    return None


def _real(path: str | os.PathLike[str]) -> Path | None:
    try:
        p = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None
    return p if p.is_dir() else None


def hidden_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Directories the sandbox covers with an empty tmpfs (resolved, existing, outer first)."""
    env = dict(os.environ if environ is None else environ)
    candidates: list[str] = ["/home", "/root", "/run/user"]
    if env.get("HOME"):
        candidates.append(env["HOME"])
    candidates.append(env.get("PICOBOT_HOME") or os.path.expanduser("~/.picobot"))
    found = sorted(
        {p for c in candidates if (p := _real(c)) is not None}, key=lambda p: len(p.parts)
    )
    # / is never hidden; /tmp is a fresh tmpfs anyway. Nested ones are kept: one inside the
    # workspace must be hidden again after the workspace is bound.
    return [p for p in found if p not in (Path("/"), Path("/tmp"))]


# Toolchain roots whose programs need the whole root (pyenv's shims run pyenv, which reads its
# versions; rustup's proxies read ~/.rustup). They hold programs, not credentials.
_TOOL_ROOTS = (".pyenv", ".rustup", ".nvm", ".volta", ".asdf", ".sdkman", ".deno", ".bun", "go")


def toolchain_dirs(hidden: Iterable[Path], environ: Mapping[str, str] | None = None) -> list[Path]:
    """Directories on PATH (and $VIRTUAL_ENV) that a hidden directory or the fresh /tmp
    covers: shown again read-only so `python`, `cargo`, `node` from pyenv, rustup, nvm or a
    virtualenv still run. A PATH entry is shown alone (`~/.local/bin`, `~/.cargo/bin`), unless
    it lies in a toolchain root (above), which is shown whole, or is a virtualenv's `bin` (the
    virtualenv is shown); `~/.cargo/bin` brings `~/.rustup`, its toolchains, with it."""
    env = dict(os.environ if environ is None else environ)
    # The fresh /tmp hides a virtualenv made there (`python -m venv /tmp/x`, tox, CI) too.
    tmp = _real("/tmp")
    hide = [*hidden, *([tmp] if tmp is not None else [])]
    entries = [e for e in env.get("PATH", "").split(os.pathsep) if e]
    if env.get("VIRTUAL_ENV"):
        entries.append(env["VIRTUAL_ENV"])
    out: list[Path] = []
    for entry in entries:
        real = _real(entry)
        base = next((h for h in hide if real is not None and real.is_relative_to(h)), None)
        if real is None or base is None or real == base:
            continue
        first = real.relative_to(base).parts[0]
        show = base / first if first in _TOOL_ROOTS else _venv_root(real) or real
        if real.relative_to(base).parts[:2] == (".cargo", "bin") and (base / ".rustup").is_dir():
            out.append(base / ".rustup")
        out.append(show)
    unique = sorted(set(out), key=lambda p: len(p.parts))
    return [p for i, p in enumerate(unique) if not any(p.is_relative_to(q) for q in unique[:i])]


def _venv_root(bin_dir: Path) -> Path | None:
    """The virtualenv whose `bin` this is: its packages are under it, not in `bin`, and the
    venv's python is on PATH without $VIRTUAL_ENV when a console script is run by path."""
    if bin_dir.name == "bin" and (bin_dir.parent / "pyvenv.cfg").is_file():
        return bin_dir.parent
    return None


_SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock")


def bwrap_argv(
    bwrap: str,
    workspace: Path,
    *,
    network: bool,
    hidden: Iterable[Path] | None = None,
) -> list[str]:
    """The bwrap command line that runs a command under the policy of the module docstring.

    The caller appends the command (`/bin/sh -c CMD`) and passes exec's environment."""
    ws = Path(os.path.realpath(workspace))
    hide = list(hidden_dirs() if hidden is None else hidden)
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    covered: list[Path] = [Path("/tmp")]  # the fresh /tmp hides what is under it already
    for d in hide:
        if not any(d.is_relative_to(c) for c in covered):
            argv += ["--tmpfs", str(d)]
            covered.append(d)
    for d in toolchain_dirs(hide) if hidden is None else []:
        argv += ["--ro-bind", str(d), str(d)]
    for sock in _SOCKETS:
        if os.path.exists(sock):
            argv += ["--ro-bind", "/dev/null", sock]
    argv += ["--bind", str(ws), str(ws)]
    # A hidden directory inside the workspace (a workspace of $HOME holds ~/.picobot) stays
    # hidden: mounts made later cover earlier ones.
    for d in hide:
        if d != ws and d.is_relative_to(ws):
            argv += ["--tmpfs", str(d)]
    argv += [*_namespace_flags(network), "--chdir", str(ws), "--"]
    return argv


def sandbox_status(exec_config: ExecConfig) -> SandboxStatus:
    """Whether exec will run sandboxed under `exec_config.sandbox`, with a one-line reason."""
    mode: SandboxMode = exec_config.sandbox
    if mode == "none":
        return SandboxStatus(mode, False, 'tools.exec.sandbox is "none": exec runs unsandboxed')
    path = find_bwrap()
    if path is None:
        why = "bwrap (bubblewrap) is not installed"
    else:
        why = probe_bwrap(path, exec_config.network) or ""
        if not why:
            net = "with network" if exec_config.network else "no network"
            return SandboxStatus(mode, True, f"exec runs under bwrap ({path}, {net})", path)
    if mode == "bwrap":
        return SandboxStatus(mode, False, f"{why}: exec is refused; {INSTALL_HINT}")
    return SandboxStatus(mode, False, f"{why}: exec runs unsandboxed (guard and approvals only)")


def exec_sandbox_note(exec_config: ExecConfig) -> str:
    """A short warning for a status line when exec is not sandboxed ("" when it is)."""
    status = sandbox_status(exec_config)
    if status.active:
        return ""
    return "exec refused: no bwrap" if status.mode == "bwrap" else "exec unsandboxed"

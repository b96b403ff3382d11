"""How a stdio server is started: its program, working directory and PATH, never taken from
the workspace unless its config says so.

A server started in the workspace runs the repository's code before any tool is called:
`python -m mcp_server_time` imported the workspace's own `mcp_server_time.py` (issue 21),
`node -e`/`npx` read its `node_modules` and `.npmrc` (`uvx` its `uv.toml` and
`pyproject.toml`: the package index), and a relative PATH entry (`.`, `bin`, or an empty
one, which means the current directory) resolved the program there.
So, unless `cwd` is set:

- the server runs in `<PICOBOT_HOME>/data/mcp`, a private (0700) folder picobot keeps
  empty of code: nothing there to import or read as project config, and exec's sandbox
  hides it, so the agent cannot plant anything in it (when it lies inside the workspace,
  `--workspace ~`, where the file tools could, a fresh temporary folder is used instead);
- its PATH keeps only absolute entries outside the workspace, and its program (found on
  that PATH, or an absolute path) must not resolve into the workspace;
- a relative `command` (`./server`, `bin/x`) is refused: relative to what is the question;
- a Python interpreter running `-m`, `-c` or stdin gets `PYTHONSAFEPATH=1`, so even the
  folder it runs in is not put on `sys.path`.

A `cwd` in the config is the user saying where the server works: it is honoured (relative to
the workspace), and when it is inside the workspace the workspace's PATH entries and
programs are allowed too. Whether a server may start at all in an untrusted workspace is
the manager's decision (none does).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from picobot_tui.core.private_files import ensure_private_dir
from picobot_tui.core.shapes.mcp_server import McpServerConfig

_PYTHON = re.compile(r"(python|pypy)[0-9.]*w?(\.exe)?")
_PY_VALUE_OPTIONS = "WX"
"""Python's short options that take a value (`-W error`, `-X dev`); `-m` and `-c` end
the option list."""


class LaunchRefused(Exception):
    """The server is not started; the message says why and what to change."""


@dataclass(frozen=True)
class StdioLaunch:
    """What the SDK's stdio client is given: the program found, its arguments, the
    environment entries set over the SDK's defaults, and the working directory."""

    command: str
    args: list[str]
    env: dict[str, str]
    cwd: Path
    explicit_cwd: bool


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder)
    except (OSError, RuntimeError):  # a symlink loop: not something to run from
        return True


_fallback: Path | None = None


def private_cwd(folder: Path, workspace: Path) -> Path:
    """The default working directory, `folder` (made 0700); else one temporary folder for
    the process: when `folder` cannot be made (a read-only home) or is inside the workspace
    (`--workspace ~` holds ~/.picobot: write_file could plant a `node_modules` in it)."""
    global _fallback
    try:
        ensure_private_dir(folder)
        if not _inside(folder, workspace):
            return folder.resolve()
    except OSError:
        pass
    if _fallback is None or not _fallback.is_dir():
        _fallback = Path(tempfile.mkdtemp(prefix="picobot-mcp-")).resolve()
    return _fallback


def safe_path(value: str, workspace: Path, *, allow_workspace: bool) -> str:
    """PATH without the entries that depend on the current directory (empty, `.`, relative)
    and, unless allowed, without those inside the workspace."""
    kept = []
    for entry in value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        if not allow_workspace and _inside(Path(entry), workspace):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def _cwd(config: McpServerConfig, workspace: Path, default: Path) -> tuple[Path, bool]:
    if config.cwd is None or not config.cwd.strip():
        return private_cwd(default, workspace), False
    cwd = Path(config.cwd).expanduser()
    cwd = (workspace / cwd if not cwd.is_absolute() else cwd).resolve()
    if not cwd.is_dir():
        raise LaunchRefused(f"`cwd` {cwd} is not a folder that exists")
    return cwd, True


def _program(
    command: str, cwd: Path, explicit_cwd: bool, raw_path: str, workspace: Path, allowed: bool
) -> str:
    """The program to run: absolute, or found on the safe PATH; never in the workspace
    unless `allowed`."""
    command = os.path.expanduser(command)
    if os.sep not in command:
        found = shutil.which(command, path=safe_path(raw_path, workspace, allow_workspace=allowed))
        if found is None:
            there = shutil.which(command, path=safe_path(raw_path, workspace, allow_workspace=True))
            if there is not None and not allowed:
                raise LaunchRefused(
                    f"`command` {command!r} is found only inside the workspace ({there}); "
                    "servers are not started from the workspace unless their `cwd` is set to "
                    "a folder in it"
                )
            raise LaunchRefused(f"command not found: {command}")
        command = found
    elif not os.path.isabs(command):
        if not explicit_cwd:
            raise LaunchRefused(
                f"`command` {command!r} is a relative path and no `cwd` is set (servers do "
                "not start in the workspace by default): give the program's absolute path, "
                "or set `cwd` to the folder it is relative to"
            )
        command = str(cwd / command)
    if not allowed and _inside(Path(command), workspace):
        raise LaunchRefused(
            f"`command` resolves to {Path(command).resolve()}, inside the workspace: servers "
            "are not started from the workspace unless their `cwd` is set to a folder in it"
        )
    return command


def _cwd_on_sys_path(args: list[str]) -> bool:
    """Whether `python ARGS` puts its current directory first on sys.path: `-m`, `-c`,
    stdin, the REPL (a script puts the script's own folder there, which the user named)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-" or not arg.startswith("-"):
            return arg == "-"
        if arg == "--":
            return i + 1 >= len(args) or args[i + 1] == "-"
        if arg.startswith("--"):
            i += 2 if arg == "--check-hash-based-pycs" else 1
            continue
        flags = arg[1:]
        for j, flag in enumerate(flags):
            if flag in "mc":
                return True
            if flag in _PY_VALUE_OPTIONS:
                i += 1 if j == len(flags) - 1 else 0  # `-W error` takes the next argument
                break
        i += 1
    return True


PASSED_ON = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
)
"""Variables a stdio server gets from picobot's environment beyond the SDK's few (HOME,
LOGNAME, PATH, SHELL, TERM, USER), in both cases: what TLS and proxies need. Without them
`uvx mcp-server-time` behind a private CA failed its download with a certificate error
("Connection closed" was all one saw). None of them holds a secret picobot scrubs for:
a proxy URL with a password in it is the user's own choice of how to reach the network."""


def passed_on(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The TLS and proxy variables of `environ` (os.environ) a stdio server inherits."""
    environ = dict(os.environ) if environ is None else environ
    names = [*PASSED_ON, *(n.lower() for n in PASSED_ON)]
    return {n: environ[n] for n in names if n in environ}


def plan_stdio(config: McpServerConfig, workspace: Path, default_cwd: Path) -> StdioLaunch:
    """How to start `config`'s server for `workspace` (resolved); LaunchRefused when it
    would be started from the workspace without `cwd` saying so, or cannot be found."""
    assert config.command is not None
    workspace = workspace.resolve()
    cwd, explicit = _cwd(config, workspace, default_cwd)
    allowed = explicit and _inside(cwd, workspace)
    env = {**passed_on(), **config.env}  # the server's own `env` wins
    raw_path = env.get("PATH", os.environ.get("PATH", os.defpath))
    # An empty PATH means the current directory to a program's own lookups: never that.
    env["PATH"] = safe_path(raw_path, workspace, allow_workspace=allowed) or os.defpath
    program = _program(config.command, cwd, explicit, raw_path, workspace, allowed)
    python = _PYTHON.fullmatch(os.path.basename(program)) is not None
    if python and not explicit and "PYTHONSAFEPATH" not in env and _cwd_on_sys_path(config.args):
        env["PYTHONSAFEPATH"] = "1"
    return StdioLaunch(program, list(config.args), env, cwd, explicit)

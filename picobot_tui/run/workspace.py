"""Which directory a run works in, and what an untrusted one may do.

The workspace is `--workspace`, else `agents.defaults.workspace`, else the current directory
(`CoreSettings.workspace_path`). It must exist: picobot never creates it. The current
directory is refused when it is the home directory or `/`, which are never a project. A named
workspace and every headless run are trusted; the TUI asks about an implicit one
(`tui/trust.py`) and, when the user says no, `run.runtime.make_untrusted` turns the runtime read-only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from picobot_tui.core.paths import directory_problem
from picobot_tui.core.visible import label
from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError

if TYPE_CHECKING:
    from picobot_tui.core.settings import CoreSettings

_NAME_ONE = "Pass --workspace DIR, or set agents.defaults.workspace in the config."


def check_workspace(settings: CoreSettings, *, create: bool = False) -> Path:
    """The workspace, resolved; RunError (exit 2) when it is missing, not a directory, or
    an implicit home directory or `/`. `create` (the library API's `Agent(workspace=...)`,
    never the command line): a named workspace that does not exist is made."""
    ws = settings.workspace_path
    if not settings.workspace_explicit and ws in _never_implicit():
        where = "your home directory" if ws != Path(ws.anchor) else "the filesystem root"
        raise RunError(
            f"picobot does not use {where} ({ws}) as its workspace unless told to. "
            "cd into a project, or pass --workspace DIR (--workspace . to mean it).",
            EXIT_USAGE,
        )
    if create and settings.workspace_explicit and not os.path.lexists(ws):
        try:
            ws.mkdir(parents=True)
        except OSError as e:
            raise RunError(
                f"cannot create the workspace {ws}: {e.strerror or e}. {_NAME_ONE}", EXIT_USAGE
            ) from None
    problem = directory_problem(ws)
    if problem is not None:
        shown = label(str(ws), 300, exact=True)
        raise RunError(f"the workspace {shown} {problem}. {_NAME_ONE}", EXIT_USAGE)
    return ws


def _never_implicit() -> set[Path]:
    out = {Path("/").resolve()}
    with contextlib.suppress(RuntimeError):  # no home directory known
        out.add(Path.home().resolve())
    return out


def untrusted_note(ws: Path) -> str:
    """Why the tools refuse to change anything (the tool error the model and user see)."""
    return (
        f"the workspace {ws} is not trusted, so the tools are read-only. Restart picobot "
        "and trust it, or name it with --workspace."
    )


def current_workspace(explicit: Path | None = None) -> Path:
    """The workspace `picobot agent` would use here, resolved: `explicit` (a --workspace),
    else agents.defaults.workspace, else the current directory. For the sessions commands,
    which load the settings only for this: a broken config falls back to the current
    directory rather than stop anyone from listing their sessions."""
    if explicit is not None:
        return explicit.expanduser().resolve()
    from picobot_tui.config.settings import ConfigError, load_settings

    try:
        settings, _ = load_settings()
    except ConfigError:
        return Path.cwd().resolve()
    return settings.workspace_path

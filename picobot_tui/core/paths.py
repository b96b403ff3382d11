"""Where picobot keeps its files. Imports nothing heavy: `picobot sessions ...` needs only
these paths, not the settings (pydantic-settings costs ~0.1 s of CPU to import)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def picobot_home() -> Path:
    """The root of all picobot files: `$PICOBOT_HOME` or `~/.picobot`."""
    return Path(os.environ.get("PICOBOT_HOME") or "~/.picobot").expanduser()


def config_path() -> Path:
    return picobot_home() / "config.json"


def shown(path: Path) -> str:
    """`path` as a message shows it: `~/…` under the home directory (shorter lines)."""
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def sessions_dir() -> Path:
    """The session store's directory (what `Settings.sessions_dir` returns)."""
    return picobot_home() / "sessions"


def mcp_cwd() -> Path:
    """Where a stdio MCP server runs when its config names no `cwd`: a private folder of
    picobot's, never the workspace (core/mcp/launch.py says why)."""
    return picobot_home() / "data" / "mcp"


def directory_problem(path: Path) -> str | None:
    """Why `path` cannot be used as a folder ("does not exist", "is not a directory", or the
    system's reason), or None when it is one. Path.is_dir() raises on Python 3.11 for a name
    too long or a folder it may not search (ENAMETOOLONG, EACCES): a workspace or an ACP
    `cwd` of 300 characters gave a traceback."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "does not exist"
    except NotADirectoryError:
        return "is not a directory"
    except OSError as e:
        return f"cannot be used: {e.strerror or e}"
    except ValueError:  # an embedded NUL byte
        return "cannot be used: its name holds a NUL character"
    return None if stat.S_ISDIR(st.st_mode) else "is not a directory"

"""Where picobot keeps its files. Imports nothing heavy: `picobot sessions ...` needs only
these paths, not the settings (pydantic-settings costs ~0.1 s of CPU to import)."""

from __future__ import annotations

import os
from pathlib import Path


def picobot_home() -> Path:
    """The root of all picobot files: `$PICOBOT_HOME` or `~/.picobot`."""
    return Path(os.environ.get("PICOBOT_HOME") or "~/.picobot").expanduser()


def config_path() -> Path:
    return picobot_home() / "config.json"


def sessions_dir() -> Path:
    """The session store's directory (what `Settings.sessions_dir` returns)."""
    return picobot_home() / "sessions"


def mcp_cwd() -> Path:
    """Where a stdio MCP server runs when its config names no `cwd`: a private folder of
    picobot's, never the workspace (core/mcp/launch.py says why)."""
    return picobot_home() / "data" / "mcp"

"""Config helpers for the TUI: "always allow" a tool in config.json (keeping the user's
other keys), and the credentials hint shown at start-up."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from picobot_tui.config import Settings, config_path, strip_json_comments

log = logging.getLogger("picobot")


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    data = json.loads(strip_json_comments(text))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the config must be a JSON object")
    return data


def persist_always_allow(tool: str, path: Path | None = None) -> Path:
    """Add `tool` to `tools.alwaysAllow` in config.json; every other key is kept as it was.

    The file is replaced atomically. (`//` comments in it are not kept.)
    """
    path = path or config_path()
    data = _read(path)
    tools = data.get("tools")
    if not isinstance(tools, dict):
        tools = data["tools"] = {}
    key = (
        "always_allow" if "always_allow" in tools and "alwaysAllow" not in tools else "alwaysAllow"
    )
    allowed = tools.get(key)
    if not isinstance(allowed, list):
        allowed = tools[key] = []
    if tool not in allowed:
        allowed.append(tool)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def credentials_hint(settings: Settings, model: str) -> str | None:
    """What to do when `model` has no usable key (None when fine). May import litellm:
    call it from a thread."""
    try:
        from picobot_tui.run_context import credentials_problem

        return credentials_problem(settings, model)
    except Exception as e:  # the first real call reports the problem anyway
        log.warning("credentials check failed: %s", e)
        return None

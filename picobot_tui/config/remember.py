"""Config helpers for the front ends: "always allow" a tool (`tools.alwaysAllow`) or a
web_fetch host (`tools.web.allowHosts`) in config.json, keeping the user's other keys, and the
credentials hint shown at start-up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.config.settings import Settings
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.paths import config_path

if TYPE_CHECKING:
    from picobot_tui.core.events import ApprovalRequested


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


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    section = data.get(name)
    if not isinstance(section, dict):
        section = data[name] = {}
    return section


def _append(section: dict[str, Any], camel: str, snake: str, value: str) -> None:
    """Add `value` to the list under `camel` (or `snake`, when the file spells it so)."""
    key = snake if snake in section and camel not in section else camel
    items = section.get(key)
    if not isinstance(items, list):
        items = section[key] = []
    if value not in items:
        items.append(value)


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    # A new config file is private (it may hold API keys); an existing one keeps its mode.
    atomic_write(path, text.encode("utf-8"), 0o600)


def persist_always_allow(tool: str, path: Path | None = None) -> Path:
    """Add `tool` to `tools.alwaysAllow` in config.json; every other key is kept as it was.

    The file is replaced atomically. (`//` comments in it are not kept.)
    """
    path = path or config_path()
    data = _read(path)
    _append(_section(data, "tools"), "alwaysAllow", "always_allow", tool)
    _write(path, data)
    return path


def persist_allow_host(host: str, path: Path | None = None) -> Path:
    """Add `host` to `tools.web.allowHosts` in config.json, like persist_always_allow."""
    path = path or config_path()
    data = _read(path)
    _append(_section(_section(data, "tools"), "web"), "allowHosts", "allow_hosts", host)
    _write(path, data)
    return path


def remember_always(settings: Settings, req: ApprovalRequested) -> tuple[str, Path]:
    """An "always" answer: the host (web_fetch) or the tool is allowed from now on, in
    `settings` and in config.json. Returns (what was allowed, the file). OSError/ValueError
    when the file cannot be written (the in-memory setting holds for this run anyway)."""
    if req.scope == "host" and req.host:
        if req.host not in settings.tools.web.allow_hosts:
            settings.tools.web.allow_hosts.append(req.host)
        return f"web_fetch of {req.host}", persist_allow_host(req.host)
    if req.name not in settings.tools.always_allow:
        settings.tools.always_allow.append(req.name)
    return req.name, persist_always_allow(req.name)

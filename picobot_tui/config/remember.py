"""Config helpers for the front ends: "always allow" a tool or an exec command prefix
(`tools.alwaysAllow`: `"write_file"`, `"exec(git status:*)"`) or a web_fetch host
(`tools.web.allowHosts`) in config.json, keeping the user's other keys; the stored rules
listed and removed (`/permissions`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.config.settings import Settings
from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.command_rules import COMMAND_TOOL, describe, prefix_rule
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
    data = json_input.loads(strip_json_comments(text))  # JsonInputError is a ValueError
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


def always_entry(req: ApprovalRequested) -> str | None:
    """The `tools.alwaysAllow` entry an "always" answer saves: the tool, or for exec its
    offered prefix rule (None when exec offered no prefix: nothing is saved)."""
    if req.name == COMMAND_TOOL:
        return prefix_rule(req.prefix) if req.prefix else None
    return req.name


def remember_always(settings: Settings, req: ApprovalRequested) -> tuple[str, Path] | None:
    """An "always" answer: the host (web_fetch), exec's command prefix or the tool is allowed
    from now on, in `settings` and in config.json. Returns (what was allowed, the file), or
    None when nothing can be saved (exec with no safe prefix). OSError/ValueError when the
    file cannot be written (the in-memory setting holds for this run anyway)."""
    if req.scope == "host" and req.host:
        if req.host not in settings.tools.web.allow_hosts:
            settings.tools.web.allow_hosts.append(req.host)
        return f"web_fetch of {req.host}", persist_allow_host(req.host)
    entry = always_entry(req)
    if entry is None:
        return None
    if entry not in settings.tools.always_allow:
        settings.tools.always_allow.append(entry)
    what = f"exec of commands starting with {req.prefix}" if entry != req.name else req.name
    return what, persist_always_allow(entry)


@dataclass(frozen=True)
class StoredRule:
    """One allow-list entry `/permissions` shows: `kind` "tool" (tools.alwaysAllow, plain
    names and exec rules) or "host" (tools.web.allowHosts)."""

    kind: Literal["tool", "host"]
    value: str

    @property
    def label(self) -> str:
        if self.kind == "host":
            return f"web_fetch of {self.value}  (tools.web.allowHosts)"
        return f"{self.value}: {describe(self.value)}  (tools.alwaysAllow)"


def stored_rules(settings: Settings) -> list[StoredRule]:
    """The allow-list entries in effect, in config order."""
    rules = [StoredRule("tool", v) for v in settings.tools.always_allow]
    return rules + [StoredRule("host", v) for v in settings.tools.web.allow_hosts]


def _remove(section: dict[str, Any], camel: str, snake: str, value: str) -> bool:
    found = False
    for key in (camel, snake):
        items = section.get(key)
        if isinstance(items, list) and value in items:
            section[key] = [v for v in items if v != value]
            found = True
    return found


def forget_rule(settings: Settings, rule: StoredRule, path: Path | None = None) -> Path | None:
    """Remove `rule` from `settings` and from config.json. Returns the file it was removed
    from, or None when the file does not hold it (it came from elsewhere, e.g. an environment
    variable: it is gone for this run only). OSError/ValueError when the file cannot be
    read or written."""
    conf = settings.tools
    items = conf.web.allow_hosts if rule.kind == "host" else conf.always_allow
    while rule.value in items:
        items.remove(rule.value)
    path = path or config_path()
    data = _read(path)
    tools = data.get("tools")
    if not isinstance(tools, dict):
        return None
    if rule.kind == "host":
        web = tools.get("web")
        found = isinstance(web, dict) and _remove(web, "allowHosts", "allow_hosts", rule.value)
    else:
        found = _remove(tools, "alwaysAllow", "always_allow", rule.value)
    if not found:
        return None
    _write(path, data)
    return path

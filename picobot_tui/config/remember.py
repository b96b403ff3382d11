"""Config helpers for the front ends: "always allow" a tool, an exec rule (`"write_file"`,
`"exec(git status:*)"`, `"exec(ls -la)"`) or a web_fetch host, for this workspace
(permissions.json, config/workspace_rules.py: the default) or everywhere (config.json's
`tools.alwaysAllow` / `tools.web.allowHosts`, keeping the user's other keys); the stored
rules listed with their scope and removed (`/permissions`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from picobot_tui.config.jsonc import strip_json_comments
from picobot_tui.config.settings import Settings
from picobot_tui.config.workspace_rules import remove_rule, save_rule
from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.command_rules import COMMAND_TOOL, describe, prefix_rule
from picobot_tui.core.paths import config_path
from picobot_tui.core.visible import visible

if TYPE_CHECKING:
    from picobot_tui.core.events import ApprovalRequested
    from picobot_tui.core.tools.base import ToolContext

Scope = Literal["workspace", "everywhere"]
"""Where an "always" answer applies: this workspace (the default) or every workspace."""


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
    """The `tools.alwaysAllow` entry an "always" answer saves: the tool, or for exec the
    offered rule (a prefix or the exact command; None when exec offered none: nothing is
    saved)."""
    if req.name == COMMAND_TOOL:
        return req.rule or (prefix_rule(req.prefix) if req.prefix else None)
    return req.name


def _said(req: ApprovalRequested, entry: str) -> str:
    if req.name != COMMAND_TOOL:
        return entry
    if req.prefix:
        return f"exec of commands starting with {req.prefix}"
    return f"the exact command {entry}"


def remember_always(
    settings: Settings, ctx: ToolContext, req: ApprovalRequested, scope: Scope = "workspace"
) -> tuple[str, Path] | None:
    """An "always" answer: the host (web_fetch), exec's offered rule or the tool is allowed
    from now on, for this workspace (`ctx.saved` and permissions.json) or, with `scope`
    "everywhere", in `settings` and config.json. Returns (what was allowed, with where,
    and the file), or None when nothing can be saved (exec with no rule offered).
    OSError/ValueError when the file cannot be written (the answer holds for this call)."""
    if req.scope == "host" and req.host:
        attr, value, what = "hosts", req.host, f"web_fetch of {req.host}"
    else:
        entry = always_entry(req)
        if entry is None:
            return None
        attr, value, what = "tools", entry, _said(req, entry)
    if scope == "everywhere":
        items = settings.tools.web.allow_hosts if attr == "hosts" else settings.tools.always_allow
        persist = persist_allow_host if attr == "hosts" else persist_always_allow
        path = persist(value)
        if value not in items:
            items.append(value)
        return f"{what} (everywhere)", path
    path = save_rule(ctx.workspace, attr, value)
    items = getattr(ctx.saved, attr)
    if value not in items:
        items.append(value)
    return f"{what} (in this workspace)", path


@dataclass(frozen=True)
class StoredRule:
    """One allow-list entry `/permissions` shows: `kind` "tool" (plain names and exec rules)
    or "host" (web_fetch hosts); `scope` "workspace" (permissions.json, for this workspace)
    or "everywhere" (config.json, or an environment variable)."""

    kind: Literal["tool", "host"]
    value: str
    scope: Scope = "everywhere"

    @property
    def label(self) -> str:
        where = "this workspace" if self.scope == "workspace" else "everywhere"
        if self.kind == "host":
            return f"[{where}] web_fetch of {visible(self.value)}"
        return f"[{where}] {visible(self.value)}: {visible(describe(self.value))}"


def stored_rules(settings: Settings, ctx: ToolContext) -> list[StoredRule]:
    """The allow-list entries in effect: this workspace's, then the config's, in order."""
    saved, conf = ctx.saved, settings.tools
    return [
        *(StoredRule("tool", v, "workspace") for v in saved.tools),
        *(StoredRule("host", v, "workspace") for v in saved.hosts),
        *(StoredRule("tool", v) for v in conf.always_allow),
        *(StoredRule("host", v) for v in conf.web.allow_hosts),
    ]


def _remove(section: dict[str, Any], camel: str, snake: str, value: str) -> bool:
    found = False
    for key in (camel, snake):
        items = section.get(key)
        if isinstance(items, list) and value in items:
            section[key] = [v for v in items if v != value]
            found = True
    return found


def forget_rule(
    settings: Settings, ctx: ToolContext, rule: StoredRule, path: Path | None = None
) -> Path | None:
    """Remove `rule` from where it applies (this run at once, and its file). Returns the file
    it was removed from, or None when the file does not hold it (it came from elsewhere, e.g.
    an environment variable: it is gone for this run only). OSError/ValueError when the file
    cannot be read or written."""
    attr = "hosts" if rule.kind == "host" else "tools"
    if rule.scope == "workspace":
        items = getattr(ctx.saved, attr)
        while rule.value in items:
            items.remove(rule.value)
        return remove_rule(ctx.workspace, attr, rule.value)
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

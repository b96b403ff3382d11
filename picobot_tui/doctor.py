"""`picobot doctor`: one screen that says whether picobot can work here, and what to fix.

Every check is local: no network call, no model call, nothing written except a probe file
in the workspace that is removed at once. The exit code is 1 when any check failed, else 0
(warnings do not fail).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

Level = Literal["ok", "warn", "fail", "info"]
MASK = "********"
_MARK: dict[Level, str] = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "info": "    "}
# Smallest terminal the TUI lays out fully; below it the side panes collapse.
_MIN_COLS, _MIN_ROWS = 80, 24


@dataclass
class Check:
    """One line of the report, with optional detail lines under it."""

    level: Level
    title: str
    detail: list[str] = field(default_factory=list)


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, level: Level, title: str, *detail: str) -> None:
        self.checks.append(Check(level, title, list(detail)))

    @property
    def failed(self) -> bool:
        return any(c.level == "fail" for c in self.checks)

    def render(self) -> str:
        out = []
        for c in self.checks:
            out.append(f"[{_MARK[c.level]}] {c.title}")
            out.extend(f"         {line}" for line in c.detail)
        fails = sum(c.level == "fail" for c in self.checks)
        warns = sum(c.level == "warn" for c in self.checks)
        out.append("")
        out.append(
            f"{fails} problem{'s' if fails != 1 else ''}, {warns} warning{'s' if warns != 1 else ''}."
            if fails or warns
            else "Everything picobot needs is in place."
        )
        return "\n".join(out)


def masked_settings(settings: Any) -> dict[str, Any]:
    """The effective settings as JSON-ready camelCase data, every secret masked: API keys
    (pydantic already shows SecretStr as stars) and every extraHeaders value."""
    data: dict[str, Any] = settings.model_dump(mode="json", by_alias=True)
    for provider in data.get("providers", {}).values():
        if provider.get("apiKey"):
            provider["apiKey"] = MASK
        headers = provider.get("extraHeaders") or {}
        provider["extraHeaders"] = {k: MASK for k in headers}
    return data


def _non_default(data: Any, default: Any, prefix: str = "") -> list[str]:
    """`key = value` lines for the settings that differ from the defaults."""
    if isinstance(data, dict) and isinstance(default, dict):
        out: list[str] = []
        for key, value in data.items():
            out.extend(_non_default(value, default.get(key), f"{prefix}{key}."))
        return out
    if data == default:
        return []
    return [f"{prefix.rstrip('.')} = {json.dumps(data)}"]


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def check_config(report: Report) -> Any | None:
    """The config file and the effective settings; returns the settings (None if broken)."""
    from picobot_tui.config.settings import ConfigError, Settings, load_settings
    from picobot_tui.core.paths import config_path

    path = config_path()
    try:
        settings, warnings = load_settings()
    except ConfigError as e:
        report.add("fail", f"config: {path} is invalid", *str(e).splitlines())
        return None
    where = str(path) if path.exists() else f"{path} (not there: defaults; `picobot onboard`)"
    report.add("warn" if warnings else "ok", f"config: {where}", *warnings)
    shown = masked_settings(settings)
    changed = _non_default(shown, masked_settings(Settings.model_construct()))
    d = settings.agents.defaults
    t = settings.tools
    report.add(
        "info",
        "effective settings (secrets masked)",
        f"model = {d.model}",
        f"workspace = {settings.workspace_path}",
        f"tools.approval = {t.approval}; exec sandbox = {t.exec.sandbox}, "
        f"network = {t.exec.network}, env = {json.dumps(t.exec.env)}",
        f"tools.web.allowHosts = {json.dumps(t.web.allow_hosts)}",
        *(["changed from the defaults:"] + [f"  {line}" for line in changed] if changed else []),
    )
    return settings


def check_key(report: Report, settings: Any) -> None:
    from picobot_tui.run.context import credentials_problem

    model = settings.agents.defaults.model
    problem = credentials_problem(settings, model)
    if problem:
        report.add("fail", f"provider key: missing for {model}", problem)
    else:
        report.add("ok", f"provider key: {model} has what it needs (not checked online)")


def check_workspace(report: Report, settings: Any) -> None:
    from picobot_tui.run.options import RunError
    from picobot_tui.run.workspace import check_workspace as usable

    ws = settings.workspace_path
    try:
        usable(settings)  # exists, a directory, not an implicit $HOME or /
    except RunError as e:
        report.add("fail", f"workspace: {e.message}")
        return
    try:
        with tempfile.NamedTemporaryFile(dir=ws, prefix=".picobot-doctor-"):
            pass
    except OSError as e:
        report.add("fail", f"workspace: {ws} is not writable", f"{e.strerror or e}")
        return
    report.add("ok", f"workspace: {ws} is writable")


def check_sandbox(report: Report, settings: Any) -> None:
    from picobot_tui.core.tools.exec.sandbox import sandbox_status

    status = sandbox_status(settings.tools.exec)
    mode = settings.tools.exec.sandbox
    if status.active:
        net = "with network" if settings.tools.exec.network else "no network"
        report.add("ok", f"sandbox: exec runs under bubblewrap ({mode}, {net})")
    elif mode == "none":
        report.add("warn", "sandbox: off (tools.exec.sandbox = none): exec is unsandboxed")
    elif mode == "bwrap":
        report.add(
            "fail",
            "sandbox: tools.exec.sandbox = bwrap, but bwrap does not work: exec will refuse to run",
            status.reason,
            "Install it: apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap.",
        )
    else:
        report.add(
            "warn",
            "sandbox: bwrap is not usable, so exec is unsandboxed (guard and approvals only)",
            status.reason,
            "Install bubblewrap to sandbox exec: apt-get install bubblewrap.",
        )


def check_hooks(report: Report, settings: Any) -> None:
    """The hooks that will run (the user's, the project's), and any whose program is
    missing: such a hook blocks every call it matches (it fails closed)."""
    from picobot_tui.config.project_hooks import project_hooks
    from picobot_tui.config.settings import ConfigError
    from picobot_tui.core.hooks.fire import describe, entries, launch_problem

    ws = settings.workspace_path
    found = entries(settings.hooks, "user")
    try:
        found += entries(project_hooks(ws), "project")
    except ConfigError as e:
        report.add("fail", f"hooks: {e}")
    if not found:
        report.add("info", "hooks: none configured")
        return
    problems = [f"{describe(e)}: {p}" for e in found if (p := launch_problem(e.hook, ws))]
    lines = [describe(e) for e in found]
    if any(e.source == "project" for e in found):
        lines.append("project hooks run only in a trusted workspace (the TUI asks)")
    report.add("ok", f"hooks: {len(found)} configured", *lines)
    if problems:
        report.add("warn", "hooks that cannot start (each blocks what it matches)", *problems)


def check_permissions(report: Report) -> None:
    """~/.picobot holds keys and conversations: nobody but the user may read it. A config
    file others can read is a failure (it may hold keys); open directories are a warning
    (the files in them are 0600)."""
    from picobot_tui.core.paths import config_path, picobot_home, sessions_dir

    home = picobot_home()
    if not home.exists():
        report.add("ok", f"permissions: {home} does not exist yet (created 0700)")
        return
    open_dirs: list[str] = []
    open_files: list[str] = []
    for path, want, bucket in (
        (home, 0o700, open_dirs),
        (config_path(), 0o600, open_files),
        (sessions_dir(), 0o700, open_dirs),
        (home / "data", 0o700, open_dirs),
    ):
        mode = _mode(path)
        if mode is not None and mode & 0o077:
            bucket.append(f"{path} is {mode:04o}; fix: chmod {want:o} {path}")
    if open_files:
        report.add("fail", "permissions: the config file is readable by others", *open_files)
    if open_dirs:
        report.add("warn", f"permissions: directories under {home} are open", *open_dirs)
    if not open_files and not open_dirs:
        report.add("ok", f"permissions: {home} is private to you")


def check_terminal(report: Report) -> None:
    if not sys.stdout.isatty():
        report.add("info", "terminal: stdout is not a terminal (fine for -m and --json)")
        return
    from rich.console import Console

    console = Console()
    size = shutil.get_terminal_size()
    colours = console.color_system or "none"
    detail = [f"TERM={os.environ.get('TERM', '')!r} COLORTERM={os.environ.get('COLORTERM', '')!r}"]
    if os.environ.get("NO_COLOR"):
        detail.append("NO_COLOR is set: colours are off")
    small = size.columns < _MIN_COLS or size.lines < _MIN_ROWS
    if small:
        detail.append(f"under {_MIN_COLS}×{_MIN_ROWS} the TUI hides its side panes")
    report.add(
        "warn" if small or colours == "none" else "ok",
        f"terminal: {size.columns}×{size.lines}, colours: {colours}",
        *detail,
    )


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def check_versions(report: Report) -> None:
    from picobot_tui import __version__

    # Read from the installed metadata: importing LiteLLM itself costs ~3 s.
    report.add(
        "info",
        f"versions: picobot {__version__}, Textual {_version('textual')}, "
        f"LiteLLM {_version('litellm')}, Python {sys.version.split()[0]}",
    )


def run_doctor(echo: Callable[[str], None] = print) -> int:
    """Run every check, print the report, return the exit code (1 if anything failed)."""
    report = Report()
    settings = check_config(report)
    if settings is not None:
        check_key(report, settings)
        check_workspace(report, settings)
        check_sandbox(report, settings)
        check_hooks(report, settings)
    check_permissions(report)
    check_terminal(report)
    check_versions(report)
    from picobot_tui.core.secrets import Scrubber
    from picobot_tui.core.textsafe import terminal_safe

    scrub = Scrubber(settings.secrets() if settings is not None else ())
    echo(terminal_safe(scrub(report.render())))
    return 1 if report.failed else 0

"""`Hooks`: every matching hook of an event, and what they say together (see the package
docstring for the rules)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picobot_tui.core.hooks.config import EVENTS, HookCommand, HooksConfig, matches
from picobot_tui.core.hooks.run import HookRun, run_hook
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.textsafe import terminal_safe

BLOCKING = frozenset({"PreToolUse", "UserPromptSubmit"})
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
"""The events whose matcher is a tool name (the others run every hook of the event)."""
"""The events a failing hook blocks (fail closed)."""
MAX_SAID = 10_000
"""Characters of a hook's reason or context passed on."""


@dataclass(frozen=True)
class HookEntry:
    event: str
    matcher: str
    hook: HookCommand
    source: str
    """Where it is configured: "user" (~/.picobot/config.json) or "project"."""


@dataclass
class Fired:
    """What the hooks of one event said together."""

    blocked: bool = False
    reason: str = ""
    """The first block's reason (or failure), as the model and the user see it."""
    context: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Failures to show (each also blocked, for a blocking event, unless failOpen)."""
    runs: list[HookRun] = field(default_factory=list)


def entries(config: HooksConfig, source: str) -> list[HookEntry]:
    out = []
    for name, event in EVENTS.items():
        for m in getattr(config, name):
            out += [HookEntry(event, m.matcher, h, source) for h in m.hooks]
    return out


def describe(entry: HookEntry) -> str:
    """One line per hook: `PreToolUse exec|write_file: ./check.sh (user, 60 s)`."""
    on = f" {entry.matcher}" if entry.matcher and entry.event in TOOL_EVENTS else ""
    how = f"{entry.source}, {entry.hook.timeout:g} s" + (
        ", failOpen" if entry.hook.fail_open else ""
    )
    return f"{entry.event}{on}: {entry.hook.command} ({how})"


def launch_problem(hook: HookCommand, cwd: Path) -> str | None:
    """Why the hook's program cannot start (it would then block, for a blocking event):
    its first word is not on PATH nor an executable file. None when it looks runnable, or
    when a shell construct makes it unknowable."""
    import shlex
    import shutil

    try:
        words = shlex.split(hook.command)
    except ValueError as e:
        return f"cannot be parsed: {e}"
    if not words or any(c in hook.command for c in "|;&<>$`(") or "=" in words[0]:
        return None
    program = words[0]
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else cwd / program
        return (
            None
            if os.access(path, os.X_OK) and path.is_file()
            else f"{program}: not an executable file"
        )
    return None if shutil.which(program) else f"{program}: not found on PATH"


class Hooks:
    """The configured hooks of one runtime."""

    def __init__(
        self,
        found: list[HookEntry],
        *,
        workspace: Path,
        secrets: tuple[str, ...] = (),
        scrub: Scrubber | None = None,
    ) -> None:
        self.entries = found
        self.workspace = workspace
        self.secrets = secrets
        self.scrub = scrub or Scrubber(list(secrets))
        self.mode = "default"
        """The permission mode each input names ("default", "plan")."""
        self._env: dict[str, str] | None = None

    def __bool__(self) -> bool:
        return bool(self.entries)

    def drop(self, source: str) -> None:
        """Forget the hooks of `source` (an untrusted workspace's project hooks)."""
        self.entries = [e for e in self.entries if e.source != source]

    def matching(self, event: str, tool: str | None = None) -> list[HookEntry]:
        return [e for e in self.entries if e.event == event and matches(e.matcher, tool)]

    def env(self) -> dict[str, str]:
        """exec's clean environment (no credentials) with the workspace named; made once
        (3 ms per hook run when it was made for each)."""
        if self._env is not None:
            return dict(self._env)
        from picobot_tui.core.tools.exec.env import clean_env

        env = clean_env(os.environ, self.secrets)
        ws = str(self.workspace)
        env.update(PWD=ws, PICOBOT_PROJECT_DIR=ws, CLAUDE_PROJECT_DIR=ws)
        env.pop("OLDPWD", None)
        self._env = env
        return dict(env)

    def _said(self, text: str) -> str:
        text = terminal_safe(self.scrub(text)).strip()
        return text if len(text) <= MAX_SAID else text[: MAX_SAID - 1] + "…"

    async def fire(
        self,
        event: str,
        session: Any,
        fields: dict[str, Any] | None = None,
        *,
        tool: str | None = None,
    ) -> Fired:
        """Run every hook of `event` matching `tool`, in order; a blocking event stops at
        the first block. `session` is the core Session (its key and file)."""
        payload = {
            "session_id": getattr(session, "key", ""),
            "transcript_path": str(getattr(session, "path", "")),
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": self.mode,
            **(fields or {}),
        }
        fired = Fired()
        for entry in self.matching(event, tool):
            run = await run_hook(entry.hook, payload, cwd=self.workspace, env=self.env())
            fired.runs.append(run)
            if run.verdict == "allow" and not run.context:
                continue
            shown = self._said(entry.hook.command)
            if run.context:
                fired.context.append(self._said(run.context))
            if run.verdict == "failed":
                closes = event in BLOCKING and not entry.hook.fail_open
                then = "; the call is blocked" if closes else ""
                fired.errors.append(f"{event} hook `{shown}` {self._said(run.reason)}{then}")
                if closes:
                    fired.blocked = True
                    fired.reason = fired.reason or (
                        f"the {event} hook `{shown}` failed ({self._said(run.reason)}), "
                        "and a failing hook blocks"
                    )
            elif run.verdict == "block":
                fired.blocked = True
                fired.reason = fired.reason or (
                    self._said(run.reason) or f"blocked by the {event} hook `{shown}`"
                )
            if fired.blocked and event in BLOCKING:
                break
        return fired

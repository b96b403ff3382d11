"""The `hooks` config: per event, matchers and the commands they run (docs/hooks.md).

The shape Claude Code's settings use, so existing configurations carry over:
`{"PreToolUse": [{"matcher": "exec|write_file", "hooks": [{"type": "command",
"command": "./check.sh", "timeout": 30}]}]}`. picobot adds `failOpen`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from picobot_tui.core.settings_base import Section

EVENTS = {
    "session_start": "SessionStart",
    "user_prompt_submit": "UserPromptSubmit",
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "stop": "Stop",
    "pre_compact": "PreCompact",
}
"""Field name -> the event's name in the config and in each hook's input."""


class HookCommand(Section):
    """One command a matcher runs."""

    type: Literal["command"] = "command"
    """Only `command` hooks: a shell command line, run with /bin/sh -c."""
    command: str = Field(min_length=1)
    """The command; its input is the event as JSON on stdin, its cwd the workspace."""
    timeout: float = Field(default=60.0, gt=0, le=600)
    """Seconds before the hook is killed (a timeout blocks, like any failure)."""
    fail_open: bool = False
    """`true`: when this hook fails (exit other than 0 and 2, crash, timeout, not launched),
    the call goes on. By default a failure blocks PreToolUse and UserPromptSubmit."""


class HookMatcher(Section):
    """Which calls an entry's hooks see."""

    matcher: str = ""
    """For PreToolUse and PostToolUse: the tool's name, or a regular expression matched
    against the whole name (`exec|write_file`, `mcp_git_.*`); empty or `*`: every tool.
    Other events ignore it."""
    hooks: list[HookCommand] = Field(min_length=1)

    @field_validator("matcher")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if value not in ("", "*"):
            try:
                re.compile(value)
            except re.error as e:
                raise ValueError(f"matcher {value!r} is not a regular expression: {e}") from None
        return value


def matches(matcher: str, tool: str | None) -> bool:
    """Whether a matcher covers a tool (always, for an event without a tool)."""
    if tool is None or matcher in ("", "*"):
        return True
    return re.fullmatch(matcher, tool) is not None


class HooksConfig(Section):
    """The `hooks` group: commands run at points of a session (docs/hooks.md)."""

    session_start: list[HookMatcher] = []
    """When a session starts or is resumed in this process; stdout adds context."""
    user_prompt_submit: list[HookMatcher] = []
    """Before the user's message is sent: exit 2 (or any failure) refuses it."""
    pre_tool_use: list[HookMatcher] = []
    """Before a tool call, before approval and the sandbox: exit 2 (or any failure) blocks."""
    post_tool_use: list[HookMatcher] = []
    """After a tool call, with its (scrubbed) result: exit 2 tells the model stderr."""
    stop: list[HookMatcher] = []
    """When the model ends its answer: exit 2 makes it go on, with stderr as the reason."""
    pre_compact: list[HookMatcher] = []
    """Before the context is compacted (automatically or by /compact)."""

    def any(self) -> bool:
        return any(getattr(self, name) for name in EVENTS)

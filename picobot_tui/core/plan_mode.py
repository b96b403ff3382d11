"""Plan mode: the model may read and think, and nothing it calls changes anything.

Enforced where a call is dispatched (core/tool_step.py), not in the prompt: a model told not
to write sometimes writes anyway. The tools stay in the list (a model whose write tools
vanish loops retrying them); a call that could change something is answered with
`refusal(name)` without running, before hooks, approval and the sandbox. What runs: the
calls a tool says change nothing (`Tool.reads_only`: read_file, list_dir, a todo read, an
MCP tool its server marks `readOnlyHint`) and the tools the user lists in
`tools.planReadOnly` (web_fetch, MCP tools).
"""

from __future__ import annotations

from typing import Any

from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.tools.registry import ToolRegistry

PREFIX = "plan mode: not executed"
"""How the result of every refused call starts (the TUI's timeline shows it as "plan")."""

GO_AHEAD = "Go ahead: carry out the plan above."
"""The message a front end sends when the user chooses to carry the plan out."""

DISCARDED = "The user discarded the plan above: do not carry it out."
"""Recorded (for the model) when the user discards a plan."""


def refusal(name: str) -> str:
    """The tool result of a call plan mode did not run."""
    return (
        f"{PREFIX} — present the plan instead. In plan mode {name} does not run: only "
        "calls that change nothing (reading files, listing folders, reading the todo list) "
        "run. Finish your answer with the plan; the user decides whether to carry it out."
    )


def allows(settings: CoreSettings, tools: ToolRegistry, name: str, args: dict[str, Any]) -> bool:
    """Whether this (validated) call may run: always outside plan mode; in it, only when
    it changes nothing or the user listed the tool in `tools.planReadOnly`."""
    if not tools.ctx.plan:
        return True
    return tools.reads_only(name, args) or name in settings.tools.plan_read_only


def is_refusal(content: str) -> bool:
    return content.startswith(PREFIX)

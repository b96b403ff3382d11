"""skill: the model loads a skill's instructions by name (core/skills.py).

Offered only while a skill the model may load exists (`offer`), so a workspace with none
keeps the tool list, and with it the cached prefix, as it was. The body is read afresh
from disk at each call, through the same confinement as the prompt's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picobot_tui.core.tools.base import Tool, ToolContext, ToolError

if TYPE_CHECKING:
    from picobot_tui.core.context import ContextBuilder
    from picobot_tui.core.tools.registry import ToolRegistry


class SkillTool(Tool):
    name = "skill"
    description = (
        "Load a skill: its instructions, by the name the system prompt lists under Skills. "
        "Load one when the task matches its description, then follow it."
    )
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "description": "The skill's name."}
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, context: ContextBuilder) -> None:
        self.context = context

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        wanted = str(args["name"]).strip()
        skills = [s for s in self.context.skills() if s.model_invocable]
        for skill in skills:
            if skill.name == wanted:
                return f"# Skill: {skill.name}\n{skill.body.strip()}"
        names = ", ".join(s.name for s in skills) or "none"
        raise ToolError(f"no skill named {wanted!r}; the skills: {names}")


def offer(context: ContextBuilder, tools: ToolRegistry | None) -> None:
    """Register the `skill` tool while a skill the model may load exists, and only then
    (the prompt's tool line follows)."""
    if tools is None:
        return
    wanted = any(s.model_invocable and not s.always for s in context.skills())
    if wanted and tools.get(SkillTool.name) is None:
        tools.add(SkillTool(context))
    elif not wanted and isinstance(tools.get(SkillTool.name), SkillTool):
        tools.remove(SkillTool.name)
    else:
        return
    context.tool_names = tools.names()

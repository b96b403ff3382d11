"""What `/hooks` says: each hook that runs in this session, where it is configured."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picobot_tui.core.hooks.fire import Hooks


def hooks_text(hooks: Hooks | None) -> str:
    if not hooks:
        return (
            "No hooks run here. Configure them in `hooks` in ~/.picobot/config.json, or in "
            "the project's .picobot/config.json (a trusted workspace only): docs/hooks.md."
        )
    from picobot_tui.core.hooks.fire import describe

    lines = [f"{len(hooks.entries)} hook(s) run in this session:"]
    lines += [f"  {describe(e)}" for e in hooks.entries]
    lines.append("A failing PreToolUse or UserPromptSubmit hook blocks (unless failOpen).")
    return "\n".join(lines)

"""The loop's hook points other than a tool call's (those are in core/tool_step.py): what
each event's input holds and what its answer does to the turn."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from picobot_tui.core.events import ErrorEvent, Event, Notice
from picobot_tui.core.hooks.fire import Fired, Hooks

HOOK_ERROR = "hook"
"""The ErrorEvent kind of a hook that failed (shown; it does not end the run by itself)."""
HOOK_BLOCKED = "hook_blocked"
"""The ErrorEvent kind of a message a UserPromptSubmit hook refused (the turn ends)."""
MAX_STOP_HOOK_TURNS = 3
"""Times in one turn a Stop hook may send the model on (then the answer stands)."""


def context_message(event: str, fired: Fired) -> dict[str, Any] | None:
    """The system message that carries what the hooks added for the model, if anything."""
    if not fired.context:
        return None
    return {"role": "system", "content": "\n\n".join(f"{event} hook: {c}" for c in fired.context)}


def errors(fired: Fired) -> list[Event]:
    return [ErrorEvent(e, HOOK_ERROR) for e in fired.errors]


async def session_start(
    hooks: Hooks, session: Any, resumed: bool, record: Callable[[dict[str, Any]], None]
) -> AsyncIterator[Event]:
    fired = await hooks.fire(
        "SessionStart", session, {"source": "resume" if resumed else "startup"}
    )
    for event in errors(fired):
        yield event
    if fired.blocked:
        yield Notice("hook", f"a SessionStart hook cannot stop a session: {fired.reason}")
    message = context_message("SessionStart", fired)
    if message is not None:
        record(message)


async def prompt(hooks: Hooks, session: Any, text: str) -> tuple[Fired, list[Event]]:
    """The UserPromptSubmit hooks on the user's words (before they are stored or sent)."""
    fired = await hooks.fire("UserPromptSubmit", session, {"prompt": text})
    events = errors(fired)
    if fired.blocked:
        message = f"Your message was not sent: a UserPromptSubmit hook blocked it: {fired.reason}"
        events.append(ErrorEvent(message, HOOK_BLOCKED))
    return fired, events


async def stop(hooks: Hooks, session: Any, active: bool) -> tuple[str | None, list[Event]]:
    """The Stop hooks: the reason to go on (None: the answer stands), and what to show."""
    fired = await hooks.fire("Stop", session, {"stop_hook_active": active})
    if not fired.blocked:  # a failing Stop hook is shown; it never keeps the model going
        return None, errors(fired)
    return fired.reason or "a Stop hook asked to go on", errors(fired)


async def pre_compact(hooks: Hooks, session: Any, manual: bool) -> AsyncIterator[Event]:
    fired = await hooks.fire(
        "PreCompact",
        session,
        {"trigger": "manual" if manual else "auto", "custom_instructions": ""},
    )
    for event in errors(fired):
        yield event
    if fired.blocked:
        yield Notice("hook", f"a PreCompact hook cannot stop compaction: {fired.reason}")

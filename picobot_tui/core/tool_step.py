"""The tool-execution step of a turn: one tool call from its raw arguments, through the
secret refusal and the approval policy, to its result, recorded before it is shown."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from picobot_tui.core import plan_mode
from picobot_tui.core.approval import ConfirmFn, Denied, approval_needed, ask, denied_text
from picobot_tui.core.events import (
    ApprovalRequested,
    ErrorEvent,
    Event,
    Notice,
    ToolCallFinished,
    ToolCallStarted,
)
from picobot_tui.core.hooks.points import HOOK_ERROR
from picobot_tui.core.secret_guard import REFUSED
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.tools.base import ToolError, ToolResult
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.tracing import ToolTrace
from picobot_tui.core.turn_state import SessionState, TurnState

if TYPE_CHECKING:
    from picobot_tui.core.hooks.fire import Hooks
    from picobot_tui.core.instructions import Nested
    from picobot_tui.core.sessions import Session

# The loop's logger: these lines belong to the turn's log.
log = logging.getLogger("picobot.loop")


async def run_tool(
    call: dict[str, Any],
    iteration: int,
    state: SessionState,
    turn: TurnState,
    *,
    settings: CoreSettings,
    tools: ToolRegistry | None,
    confirm: ConfirmFn | None,
    record: Callable[[dict[str, Any]], None],
    session_key: str | None = None,
    hooks: Hooks | None = None,
    session: Session | None = None,
    nested: Nested | None = None,
) -> AsyncIterator[Event]:
    """Run one call the model asked for; yields ToolCallStarted, an ApprovalRequested when
    the user is asked, then ToolCallFinished. `record` appends the result to the session.
    With `session_key`, what the call changes is checkpointed (core/checkpoints/hook.py).

    The order: the secret refusal, plan mode, the PreToolUse hooks, the approval policy,
    the tool (in the sandbox), the PostToolUse hooks. A call refused at one step never
    reaches the next: a hook's block is never put to the user. With `nested`, a file tool's
    result carries the instruction files of the folders it reached (core/instructions.py)."""
    fn = call["function"]
    call_id, name, raw = call["id"], fn["name"], fn.get("arguments") or ""
    t0 = turn.call_t0[call_id] = time.monotonic()
    args: dict[str, Any] | None = None
    result: ToolResult
    try:
        if tools is None:
            raise ToolError(f"unknown tool {name!r}: no tools are available")
        args = tools.parse_arguments(name, raw)
    except ToolError as e:
        result = ToolResult(False, f"Error: {e}", "error")
    yield ToolCallStarted(
        call_id,
        name,
        args if args is not None else raw,
        iteration,
        settings.agents.defaults.max_tool_iterations,
        server=getattr(tools.get(name) if tools is not None else None, "server_name", None),
    )
    if call_id in turn.secret_calls:  # refused before approval: nothing to say yes to
        log.warning("tool %s (%s) refused: its arguments carry a secret", name, call_id)
        args, result = None, ToolResult(False, REFUSED.format(name=name), "denied")
    if args is not None and tools is not None and not plan_mode.allows(settings, tools, name, args):
        log.info("tool %s (%s) not run: plan mode", name, call_id)
        args, result = None, ToolResult(False, plan_mode.refusal(name), "denied")
    if args is not None and hooks:
        fired = await hooks.fire(
            "PreToolUse",
            session,
            {"tool_name": name, "tool_input": args, "tool_use_id": call_id},
            tool=name,
        )
        for error in fired.errors:
            yield ErrorEvent(error, HOOK_ERROR)
        if fired.blocked:
            log.warning("tool %s (%s) blocked by a PreToolUse hook", name, call_id)
            args, result = None, ToolResult(False, f"Blocked by a hook: {fired.reason}", "denied")
    if args is not None and tools is not None:
        decision: str | Denied = "allow"
        if tools.needs_approval(name, args):
            verdict = approval_needed(settings, tools, call_id, name, args, state)
            if isinstance(verdict, ApprovalRequested) and tools.ctx.files is not None:
                # The change applies to the editor's buffer: the preview diffs that text.
                p = await tools.approval_preview_async(name, args)
                verdict = replace(verdict, preview=p.text, full=p.full, hidden=p.hidden)
            if isinstance(verdict, ApprovalRequested) and settings.checkpoints.enabled:
                verdict = _say_not_undoable(verdict, settings, tools, name, args)
            if isinstance(verdict, ApprovalRequested):
                yield verdict
                decision = await ask(confirm, verdict, state)
            else:
                decision = verdict
        if decision == "deny" or isinstance(decision, Denied):
            result = ToolResult(False, denied_text(name, decision), "denied")
        elif decision == "untrusted":
            result = ToolResult(
                False, f"Denied: {name} may not run: {tools.ctx.read_only}", "denied"
            )
        elif decision == "readonly":
            result = ToolResult(
                False,
                f"Denied: tools.approval is 'readonly', so {name} may not run.",
                "denied",
            )
        else:
            # The duration is the tool's, not the user's thinking.
            t0 = turn.call_t0[call_id] = time.monotonic()
            if settings.checkpoints.enabled and session_key is not None:
                from picobot_tui.core.checkpoints.hook import run_checkpointed

                result, note = await run_checkpointed(
                    tools,
                    name,
                    args,
                    settings=settings,
                    session=session_key,
                    turn=state.turns,
                    call_id=call_id,
                )
                if note:
                    yield Notice("checkpoints", note)
            else:
                result = await tools.execute(name, args)
            if nested is not None and result.ok:
                result = _with_nested(nested, tools, name, args, result)
            if hooks:
                async for event in _post_hooks(hooks, session, name, args, call_id, result):
                    if isinstance(event, ToolResult):
                        result = event
                    else:
                        yield event
    duration = round((time.monotonic() - t0) * 1000, 1)
    log.info("tool %s (%s) %s in %.0f ms", name, call_id, result.status, duration)
    turn.tool_traces.append(ToolTrace(call_id, name, duration, result.ok, result.status))
    # Recorded before the event goes out, so a crash or cancel keeps every finished result.
    record(
        {
            "role": "tool",
            "tool_call_id": call_id,
            "name": name,
            "content": result.content,
            "status": result.status,
        }
    )
    turn.open_calls.pop(call_id, None)
    turn.call_t0.pop(call_id, None)
    yield ToolCallFinished(call_id, name, result.ok, duration, result.content, result.status)


def _say_not_undoable(
    verdict: ApprovalRequested,
    settings: CoreSettings,
    tools: ToolRegistry,
    name: str,
    args: dict[str, Any],
) -> ApprovalRequested:
    """The preview says first when the change could not be undone (checkpoints)."""
    from picobot_tui.core.checkpoints.hook import not_undoable

    line = not_undoable(settings, tools, name, args)
    if line is None:
        return verdict
    return replace(verdict, preview=f"{line}\n{verdict.preview}", full=f"{line}\n{verdict.whole}")


async def _post_hooks(
    hooks: Hooks,
    session: Session | None,
    name: str,
    args: dict[str, Any],
    call_id: str,
    result: ToolResult,
) -> AsyncIterator[Event | ToolResult]:
    """The PostToolUse hooks see the (scrubbed) result; what they say joins it for the
    model. Yields their errors, then the result they leave."""
    response = {"output": result.content, "status": result.status, "ok": result.ok}
    fired = await hooks.fire(
        "PostToolUse",
        session,
        {"tool_name": name, "tool_input": args, "tool_use_id": call_id, "tool_response": response},
        tool=name,
    )
    for error in fired.errors:
        yield ErrorEvent(error, HOOK_ERROR)
    said = [f"PostToolUse hook: {fired.reason}"] if fired.blocked and fired.reason else []
    said += [f"PostToolUse hook: {c}" for c in fired.context]
    if said:
        yield replace(result, content="\n\n".join([result.content, *said]))


NESTED_TOOLS = {"read_file": False, "write_file": False, "edit_file": False, "list_dir": True}
"""The built-in tools whose `path` can reach a folder with instructions of its own (True:
the path is a folder)."""


def _with_nested(
    nested: Nested, tools: ToolRegistry, name: str, args: dict[str, Any], result: ToolResult
) -> ToolResult:
    """`result`, with the instruction files its call reached for the first time appended."""
    if name not in NESTED_TOOLS or not isinstance(args.get("path"), str):
        return result
    target = tools.ctx.workspace / args["path"]
    extra = nested.for_path(target, is_dir=NESTED_TOOLS[name])
    return replace(result, content=f"{result.content}\n\n{extra}") if extra else result

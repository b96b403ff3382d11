"""One `session/prompt`: the first one's checks, the prompt's content as the user message,
the loop's turn with its events sent as updates, and the stop reason (or the JSON-RPC error
of a failed turn). A cancellation (session/cancel, or the end of the connection) leaves the
session as Esc does in the TUI: partial text marked interrupted, a "cancelled" result for
every started call, and the prompt answered `cancelled`."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp import schema as s

from picobot_tui.acp.outbox import Outbox
from picobot_tui.acp.updates import agent_text, buffer_text, plan_from_todo
from picobot_tui.acp.warmup import Warmup
from picobot_tui.core.events import (
    BudgetChanged,
    ErrorEvent,
    Event,
    HistoryCompressed,
    Notice,
    StuckDetected,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    UsageUpdated,
)
from picobot_tui.core.visible import label, visible

if TYPE_CHECKING:
    from picobot_tui.acp.sessions import AcpSession

log = logging.getLogger("picobot.acp")

STOP_REASONS: dict[str, s.StopReason] = {
    "final": "end_turn",
    "max_iterations": "max_turn_requests",
    "budget_exhausted": "max_tokens",
    "cancelled": "cancelled",
}
REFUSAL_KINDS = frozenset({"content_filter", "refusal"})


def rpc_error(code: int, message: str, data: Any = None) -> RequestError:
    """A JSON-RPC error whose message is one line (a config error or a provider's message
    may span several; the whole text stays readable on one), its controls made visible."""
    return RequestError(code, label(message) or "error", data)


def uncancel() -> None:
    """The current task took its cancellation (and answers `cancelled`): clear the request,
    so later awaits in it (the loop's clean-up) are not cut short again."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        task.uncancel()


async def check(warmup: Warmup, acp_s: AcpSession) -> None:
    """The first prompt waits for LiteLLM, then checks the model, its key and the budget."""
    await warmup.wait()
    if acp_s.checked:
        return
    from picobot_tui.run.context import budget_problem, credentials_problem, model_problem

    settings, runtime = acp_s.settings, acp_s.runtime
    model = runtime.loop.model_name

    def problem() -> str | None:
        return (
            budget_problem(runtime)
            or model_problem(settings, model)
            or credentials_problem(settings, model)
        )

    message = await asyncio.to_thread(problem)
    if message:
        raise rpc_error(-32603, message, {"kind": "config"})
    acp_s.checked = True


async def run_prompt(
    out: Outbox, warmup: Warmup, acp_s: AcpSession, blocks: list[Any]
) -> s.PromptResponse:
    try:
        await check(warmup, acp_s)
        from picobot_tui.acp.prompt_content import prompt_text

        text = await prompt_text(blocks, acp_s.runtime.tools)
    except asyncio.CancelledError:
        uncancel()
        return s.PromptResponse(stop_reason="cancelled")
    if not text.strip():
        raise rpc_error(-32602, "the prompt holds no text")
    finished, error = await _drive(out, acp_s, text)
    outcome = finished.outcome if finished is not None else "cancelled"
    if acp_s.cancelling or outcome == "cancelled":
        return s.PromptResponse(stop_reason="cancelled")
    if outcome == "error":
        if error is not None and error.kind in REFUSAL_KINDS:
            return s.PromptResponse(stop_reason="refusal")
        if error is not None:
            raise rpc_error(-32603, error.message, {"kind": error.kind, "hint": label(error.hint)})
        raise rpc_error(-32603, finished.content if finished else "the turn failed")
    if outcome in ("max_iterations", "budget_exhausted") and finished and finished.content:
        await out.update(acp_s.id, agent_text(finished.content))  # why it stopped (not streamed)
    return s.PromptResponse(stop_reason=STOP_REASONS.get(outcome, "end_turn"))


async def _drive(
    out: Outbox, acp_s: AcpSession, text: str
) -> tuple[TurnFinished | None, ErrorEvent | None]:
    # Every session/prompt is a message the user sent now: after the loop stopped for too
    # many failed model calls in a row, it calls the model again (as the TUI does).
    events = acp_s.runtime.loop.run_turn(acp_s.session, text, user_sent=True)
    finished: TurnFinished | None = None
    error: ErrorEvent | None = None
    try:
        async for event in events:
            if isinstance(event, TurnFinished):
                finished = event
            elif isinstance(event, ErrorEvent):
                error = event
                log.warning("turn of %s: %s (%s)", acp_s.id, event.message, event.kind)
            else:
                await _event(out, acp_s, event)
    except asyncio.CancelledError:
        uncancel()
        await events.aclose()  # the loop records the interrupted text and cancelled calls
        finished = None
    if finished is None or finished.outcome == "cancelled":
        for update in acp_s.calls.cancel_open():
            await out.update(acp_s.id, update)
    return finished, error


async def _event(out: Outbox, acp_s: AcpSession, event: Event) -> None:
    sid = acp_s.id
    if isinstance(event, TextDelta):
        if event.text:
            await out.text(sid, event.text)
    elif isinstance(event, ToolCallStarted):
        old = await buffer_text(acp_s.runtime.tools.ctx, event.name, event.arguments)
        await out.update(sid, acp_s.calls.started(event, old))
        if runs_unasked(acp_s, event):
            await out.update(sid, acp_s.calls.in_progress(event.id))
    elif isinstance(event, ToolCallFinished):
        await out.update(sid, acp_s.calls.finished(event))
        if event.name == "todo" and event.ok:
            await _send_plan(out, acp_s)
    elif isinstance(event, UsageUpdated):
        acp_s.usage.cost_seen(event)
    elif isinstance(event, BudgetChanged):
        update = acp_s.usage.update(event)
        if update is not None:
            await out.update(sid, update)
    elif isinstance(event, (Notice, HistoryCompressed, StuckDetected)):
        note = event.note if isinstance(event, HistoryCompressed) else event.message
        await out.update(
            sid,
            s.AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=s.TextContentBlock(type="text", text=visible(note) + "\n"),
            ),
        )


def runs_unasked(acp_s: AcpSession, event: ToolCallStarted) -> bool:
    """The call runs now, without a permission request (then in_progress is sent once the
    user allows it, and never for a call the policy refuses)."""
    from picobot_tui.core.approval import approval_needed

    args, tools = event.arguments, acp_s.runtime.tools
    if not isinstance(args, dict):
        return False  # bad arguments: it fails at once
    if not tools.needs_approval(event.name, args):
        return True
    verdict = approval_needed(acp_s.settings, tools, event.id, event.name, args, acp_s.allowed)
    return verdict == "allow"


async def _send_plan(out: Outbox, acp_s: AcpSession) -> None:
    from picobot_tui.core.tools.base import ToolError
    from picobot_tui.core.tools.todo import todo_path

    try:
        path = todo_path(acp_s.runtime.tools.ctx)
    except ToolError:
        return
    plan = plan_from_todo(path)
    if plan is not None:
        await out.update(acp_s.id, plan)

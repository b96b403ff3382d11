"""Applies the core's events to the TUI panes (attributes down), and tracks the agent state.

The router holds references to the panes and calls their small APIs; panes never see each
other. It also applies the TUI's own view events (tui/view_events.py: starting, switching
sessions), so it is the one module that writes to the panes. It has no Textual imports of its own, so the mapping is easy to read and to test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, cast

from picobot_tui.core.events import (
    ApprovalRequested,
    BudgetChanged,
    ErrorEvent,
    Event,
    HistoryCompressed,
    Notice,
    Retrying,
    StuckDetected,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdated,
)
from picobot_tui.core.textsafe import safe_value
from picobot_tui.tui.cache_clock import CacheClock
from picobot_tui.tui.turn_lifecycle import Phase, TurnLifecycle
from picobot_tui.tui.view_events import (
    VIEW_EVENTS,
    AppStarted,
    AppStarting,
    ConversationCleared,
    ExecNoteShown,
    HelpShown,
    HistoryLoaded,
    McpShown,
    ModelShown,
    NoticeShown,
    PanesCleared,
    SessionLabelled,
    UserSent,
    ViewEvent,
)

if TYPE_CHECKING:
    from picobot_tui.widgets.budget_gauge import BudgetGauge
    from picobot_tui.widgets.conversation import ConversationPane
    from picobot_tui.widgets.status_bar import StatusBar
    from picobot_tui.widgets.tool_timeline import ToolTimeline

OUTCOME_NOTICES = {
    "max_iterations": "Stopped: the turn reached maxToolIterations.",
    "budget_exhausted": "Stopped: the token budget is exhausted, even after compression.",
}


def _display_safe(event: Event) -> Event:
    """The event with escape sequences and control characters removed from every text field:
    model text, tool arguments and provider errors must never drive the terminal."""
    changes = {
        f.name: safe_value(value)
        for f in fields(event)
        if f.name != "type" and isinstance(value := getattr(event, f.name), str | dict | list)
    }
    if not changes:
        return event
    # mypy checks `replace` against the union's common fields (none); the names come from
    # `fields(event)` itself.
    return cast(Event, replace(cast(Any, event), **changes))


class EventRouter:
    """One `apply(event)` per core event or view event."""

    def __init__(
        self,
        conversation: ConversationPane,
        timeline: ToolTimeline,
        gauge: BudgetGauge,
        status: StatusBar,
        *,
        lifecycle: TurnLifecycle | None = None,
        ring: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.conversation = conversation
        self.timeline = timeline
        self.gauge = gauge
        self.status = status
        self.ring = ring
        self.lifecycle = lifecycle or TurnLifecycle()
        self.compressions = 0
        self.clock = clock
        self.cache_clock = CacheClock()

    def cache_tick(self, now: float) -> None:
        """The cache cell as of `now` (the app ticks it once a second)."""
        self.status.cache, self.status.cache_state = self.cache_clock.cell(now)

    @property
    def state(self) -> Phase:
        return self.lifecycle.phase

    @state.setter
    def state(self, value: Phase) -> None:
        """Moves the lifecycle's phase and shows it: the status bar only displays it."""
        self.lifecycle.phase = value
        self.status.state = value

    async def apply(self, event: Event | ViewEvent) -> None:
        if isinstance(event, VIEW_EVENTS):
            await self._apply_view(event)
            return
        event = _display_safe(event)
        conv = self.conversation
        match event:
            case TurnStarted():
                self.lifecycle.outcome = None
                self.status.model = event.model
                self.state = "thinking"
            case TextDelta():
                await conv.append_text(event.text)
            case ToolCallArgsDelta():
                self.state = "thinking"
            case ToolCallStarted():
                name = event.name
                if event.server is not None:  # `time › get_current_time`
                    from picobot_tui.tui.mcp_wiring import tool_label

                    name = tool_label(event.name, event.server)
                await conv.add_tool_call(event.id, name, event.arguments)
                self.timeline.add_call(
                    event.id, name, event.arguments, event.iteration, event.max_iterations
                )
                self.state = "running tool"
            case ApprovalRequested():
                self._waiting(event.id, True)
                self.state = "waiting for approval"
                self.ring()
            case ToolCallFinished():
                status = shown_status(event)
                conv.finish_tool_call(event.id, status, event.result, event.duration_ms)
                self.timeline.finish_call(event.id, status, event.duration_ms)
                self.state = "thinking"
            case UsageUpdated():
                self.gauge.usage(
                    event.prompt_tokens,
                    event.completion_tokens,
                    event.session_cost,
                    cache_read=event.cache_read_tokens,
                    cache_write=event.cache_write_tokens,
                    hit_rate=event.hit_rate,
                    session_hit_rate=event.session_hit_rate,
                )
                self.cache_clock.usage(event, self.clock())
                self.cache_tick(self.clock())
                self._summary()
            case BudgetChanged():
                self.gauge.set_budget(event.estimated_tokens, event.budget, event.threshold)
                self._summary()
            case HistoryCompressed():
                self.compressions += 1
                self.gauge.compressed(
                    event.dropped_messages, event.before_tokens, event.after_tokens
                )
                text = f"History compressed: {event.note}."
                if event.summary:  # the notice opens to show what the model now knows
                    await conv.add_summary_notice(text, event.summary)
                else:
                    await conv.add_notice("compress", text)
                self._summary()
            case Retrying():
                self.state = "retrying"
                await conv.add_notice(
                    "retry",
                    f"{event.message} — retrying in {event.delay_s:g} s "
                    f"(attempt {event.attempt} of {event.max_retries}).",
                )
                self.timeline.add_note("retry", f"retry {event.attempt}", event.kind)
            case StuckDetected():
                await conv.add_notice("stuck", event.message)
                self.timeline.add_note("stuck", "stuck", event.name)
            case ErrorEvent():
                await conv.add_notice("error", event.message, event.hint)
            case Notice():
                await conv.add_notice("stuck", event.message)  # the ⚠ notice
            case TurnFinished():
                await self.finish_turn(event.outcome)

    def _waiting(self, call_id: str, waiting: bool) -> None:
        block = self.conversation.tool_block(call_id)
        if block is not None:
            block.set_waiting(waiting)
        self.timeline.set_waiting(call_id, waiting)

    def approval_answered(self, call_id: str, decision: object) -> None:
        """The user answered: an allowed call runs (its block and timer go on), a denied
        one (a "deny" or a `Denied` with a reason) waits for its result."""
        self._waiting(call_id, False)
        allowed = decision in ("allow", "allow_session", "always")
        self.state = "running tool" if allowed else "thinking"

    def show_call_changes(self, call_id: str, added: int | None, removed: int | None) -> None:
        """What a call changed in files (the checkpoints): `+a −b` on its timeline entry;
        None: the call could not be checkpointed (exec without git, too many files)."""
        if added is None or removed is None:
            self.timeline.set_not_checkpointed(call_id)
        else:
            self.timeline.set_changes(call_id, added, removed)

    async def finish_turn(self, outcome: str) -> None:
        """End of a turn: freeze text, close calls still running, go idle, ring."""
        if self.lifecycle.outcome is not None:
            return
        self.lifecycle.outcome = outcome
        cancelled = outcome == "cancelled"
        await self.conversation.end_text(interrupted=cancelled)
        for call_id in self.conversation.running_calls():
            status = "cancelled" if cancelled else "error"
            self.conversation.finish_tool_call(call_id, status, "cancelled by user", None)
            self.timeline.finish_call(call_id, status, None)
        if outcome in OUTCOME_NOTICES:
            await self.conversation.add_notice("stuck", OUTCOME_NOTICES[outcome])
        self.state = "idle"
        self.ring()

    async def _apply_view(self, event: ViewEvent) -> None:
        # Stored history is the conversation pane's to make safe (load_history), as before.
        match event:
            case AppStarting():
                self.status.model = event.model
                self.state = "starting"
            case AppStarted():
                self.status.model = event.model
                self.state = "idle"
                self.gauge.set_budget(0, event.token_budget, 0)
            case PanesCleared():
                await self.conversation.clear()
                self.timeline.clear()
                self.gauge.reset()
                self.gauge.set_budget(0, event.token_budget, 0)
                self.cache_clock.reset()
                self.cache_tick(self.clock())
                self._summary()
            case SessionLabelled():
                self.status.session = event.label
            case HistoryLoaded():
                self.gauge.messages = sum(1 for m in event.messages if m.get("role") != "system")
                for block in await self.conversation.load_history(event.messages):
                    self.timeline.add_call(block.call_id, block.tool_name, block.arguments)
                    self.timeline.finish_call(block.call_id, block.status, block.duration_ms)
            case UserSent():
                self.gauge.messages = None
                await self.conversation.add_user(event.text)
                self.state = "thinking"
            case NoticeShown():
                await self.conversation.add_notice(event.kind, event.text)
            case HelpShown():
                await self.conversation.add_help(event.rows)
            case ModelShown():
                self.status.model = event.name
            case ExecNoteShown():
                self.status.exec_note = event.note
            case ConversationCleared():
                await self.conversation.clear()
            case McpShown():
                self.status.mcp, self.status.mcp_state = event.summary, event.state

    def _summary(self) -> None:
        self.status.budget_summary = self.gauge.summary()


def shown_status(event: ToolCallFinished) -> str:
    """The status a finished call shows: "plan" for a call plan mode did not run."""
    from picobot_tui.core.plan_mode import is_refusal

    return "plan" if event.status == "denied" and is_refusal(event.result) else event.status

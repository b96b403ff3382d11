"""The ReAct loop: one user message in, a stream of typed events out.

The loop never prints and never raises to its consumer: provider failures become `ErrorEvent`
plus `TurnFinished(outcome="error")`. Every message is appended to the session as soon as it
is complete, so a crash loses at most the message in flight, and cancellation records what is
true (partial text marked interrupted, a "cancelled" result for every started tool call).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from picobot_tui.core import budget as budget_mod
from picobot_tui.core import cache_plan, compaction, mentions
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.context import ContextBuilder
from picobot_tui.core.events import (
    BudgetChanged,
    ErrorEvent,
    Event,
    HistoryCompressed,
    Notice,
    Outcome,
    StuckDetected,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from picobot_tui.core.history import heal_orphans, to_provider
from picobot_tui.core.hooks import points as hook_points
from picobot_tui.core.hooks.fire import Hooks
from picobot_tui.core.llm.model import LLMError, ModelClient, ModelRequest
from picobot_tui.core.model_call import call_model, summarise
from picobot_tui.core.secrets import Scrubber
from picobot_tui.core.sessions import Session, SessionError, SessionStore, clean_strings
from picobot_tui.core.settings import CoreSettings
from picobot_tui.core.time_line import TIME_KEY, time_line
from picobot_tui.core.tool_step import run_tool
from picobot_tui.core.tools import skill
from picobot_tui.core.tools.registry import ToolRegistry
from picobot_tui.core.tracing import ToolTrace, Tracer
from picobot_tui.core.turn_state import (
    CANCELLED_RESULT,
    STUCK_MESSAGE,
    TOO_MANY_FAILURES,
    FailureCounter,
    SessionState,
    TurnState,
    canonical_call,
)

log = logging.getLogger("picobot.loop")

STORAGE_ERROR = "storage"
"""The ErrorEvent kind of a session write that failed; front ends end the run (exit 1)."""
_STOPPED_HINT = "Fix the cause of the errors above, then send a message again."


class _Refused(Exception):
    """A UserPromptSubmit hook refused the message: the turn ends before it is stored."""


class AgentLoop:
    """Runs turns of the agent against a model client, a tool registry and a session."""

    def __init__(
        self,
        settings: CoreSettings,
        *,
        model: ModelClient,
        store: SessionStore,
        tools: ToolRegistry | None = None,
        tracer: Tracer | None = None,
        confirm: ConfirmFn | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        context: ContextBuilder | None = None,
        model_name: str | None = None,
        scrub: Scrubber | None = None,
    ) -> None:
        self.settings = settings
        self.defaults = settings.agents.defaults
        self.model = model
        self.store = store
        self.tools = tools
        self.tracer = tracer
        self.confirm = confirm
        self.sleep = sleep
        self.model_name = model_name or self.defaults.model
        # Masks secrets in what the loop records and shows (history, tool-call events).
        self.scrub = scrub or Scrubber(settings.secrets())
        self.context = context or ContextBuilder(
            settings.workspace_path,
            user_dir=settings.home,
            tool_names=tools.names() if tools else [],
            scrub=self.scrub,
        )
        self._states: dict[str, SessionState] = {}
        self.single_turn = False
        """The front end runs one turn and exits (`-m`): a call after which no other can
        come gets no cache markers (core/cache_plan.py)."""
        self.response_format: dict[str, Any] | None = None
        """Sent with every model call (ModelRequest.response_format): `-m --output-schema`."""
        self.before_turn: Callable[[], Awaitable[str | None]] | None = None
        """Awaited after the user's message is stored, before the first model call: the MCP
        servers' bounded wait (run/runtime.py). Returns a notice to show, or None."""
        # Model calls in a row that failed after their retries, across turns: at the limit
        # run_turn refuses until a front end calls `failures.reset()`.
        self.failures = FailureCounter(self.defaults.max_consecutive_failures)
        self.hooks: Hooks | None = None
        """The configured hooks (core/hooks): run/runtime.py sets them."""
        # One calibration for every session: the ratio belongs to the provider and the text.
        self.estimator = budget_mod.TokenEstimator()  # shared by the sessions: one provider

    # -- session state -----------------------------------------------------------------
    def _state(self, session: Session) -> SessionState:
        state = self._states.get(session.key)
        if state is None:
            repaired = heal_orphans(session)
            # The context the last compaction left (its summary included), then the bound
            # (in steps, as the live process moved it: the same prefix, core/budget.py).
            limit = self.defaults.max_history_messages
            window = budget_mod.bound_window(
                compaction.stored_context(repaired), limit, step=budget_mod.window_step(limit)
            )
            state = SessionState(history=window.messages, estimator=self.estimator)
            state.skipped = window.skipped
            state.call_ids = {
                c.get("id", "") for m in session.messages for c in m.get("tool_calls") or ()
            }
            state.turns = sum(1 for m in session.messages if m.get("role") == "user")
            self._states[session.key] = state
        return state

    def forget(self, session_key: str) -> None:
        """Drop cached state (e.g. after /clear or when a session is closed)."""
        self._states.pop(session_key, None)

    def _tool_schemas(self) -> list[dict[str, Any]]:
        return self.tools.schemas() if self.tools else []

    def note(self, session: Session, text: str) -> None:
        """Record a note for the model (a system message), e.g. the user discarded a plan."""
        self._record(session, self._state(session), {"role": "system", "content": text})

    def _fixed_tokens(self, system: str) -> int:
        schemas = json.dumps(self._tool_schemas())
        return budget_mod.estimate_text(system) + budget_mod.estimate_text(schemas)

    def budget(self, session: Session) -> BudgetChanged:
        """The current context estimate, e.g. for the gauge after a resume."""
        state = self._state(session)
        total = state.estimator.estimate(state.history, self._fixed_tokens(self.context.build()))
        return self._budget_event(total)

    def _budget_event(self, tokens: int) -> BudgetChanged:
        budget = self.defaults.token_budget
        return BudgetChanged(tokens, budget, int(budget * budget_mod.COMPRESS_AT))

    def fixed_cost(self) -> int:
        """chars/4 of the system prompt and tool schemas: what every call costs at least."""
        return self._fixed_tokens(self.context.build())

    async def _compact(
        self,
        session: Session,
        state: SessionState,
        turn: TurnState,
        fixed: int,
        *,
        force: bool = False,
    ) -> AsyncIterator[Event]:
        """Cut the context to 75 % of the budget (`force`, for /compact: to about half of
        what it is now); the dropped middle becomes one summary (or notice) message,
        recorded in the session so a resume sees the same context. Yields
        HistoryCompressed (and a Notice when the summary call failed)."""
        d = self.defaults
        before = state.estimator.estimate(state.history, fixed)
        room = compaction.summary_tokens(d.token_budget)
        reserve = int(room / state.estimator.ratio) + 8  # raw tokens kept for the summary
        target = d.token_budget
        if force:
            target = min(target, int(before / budget_mod.KEEP_RATIO / 2) + room)
        cut = budget_mod.compress(
            state.history, target, fixed, ratio=state.estimator.ratio, reserve=reserve
        )
        if not cut.changed:
            return
        if self.hooks:
            async for event in hook_points.pre_compact(self.hooks, session, force):
                yield event
        summary, extra, strategy = "", 0, "drop"
        # The summary takes at most half of what it replaces (compaction.summary_room).
        dropped_raw = budget_mod.estimate_messages(cut.dropped)
        room, max_chars = compaction.summary_room(
            d.token_budget, dropped_raw, state.estimator.ratio
        )
        summarize = bool(cut.dropped) and d.compaction == "summarize"
        if summarize and max_chars < compaction.MIN_SUMMARY_CHARS:
            if force:
                return  # /compact of a history too short to gain: "nothing to compress"
            summarize = False  # too little to summarise: dropped, with a note
        if summarize:
            try:
                summary, extra = await summarise(
                    self.model, self.model_name, cut.dropped, state, turn, room, d
                )
                strategy = "summarize"
            except LLMError as e:
                log.warning("summary call failed, dropping instead: %s", e.message)
                yield Notice(
                    "compaction",
                    f"The summary call failed ({e.message}); older messages were dropped "
                    "from the context instead.",
                )
        content = (
            compaction.summary_message(summary, max_chars)
            if summary
            else compaction.dropped_note(len(cut.dropped))
        )
        record = compaction.record(content, cut, strategy)
        record = clean_strings(self.scrub.scrub_obj(record))  # a summary may echo a secret
        session.append(record)  # SessionError: run_turn reports it, the next turn reloads
        state.history = [*cut.head, {"role": "system", "content": record["content"]}, *cut.tail]
        state.skipped = 0  # the window counts from the new summary, as a resume does
        after = state.estimator.estimate(state.history, fixed)
        removed = max(cut.removed, len(cut.dropped))
        yield HistoryCompressed(
            dropped_messages=removed,
            before_tokens=before,
            after_tokens=after,
            note=(
                (f"dropped {removed} older messages from the context" if removed else "")
                + (" and " if removed and cut.shortened else "")
                + ("shortened the first exchanges" if cut.shortened else "")
                + f" (~{before:,} → ~{after:,} tokens)"
                + ("; a summary replaces them" if summary else "")
                + "; the session file keeps them all"
            ),
            summary=compaction.summary_of(record["content"]),
            strategy=strategy,  # type: ignore[arg-type]
            extra_tokens=extra,
        )

    async def compact(self, session: Session) -> AsyncIterator[Event]:
        """Compact the context now (the /compact command): the same path as a turn's."""
        try:
            state = self._state(session)
            fixed = self._fixed_tokens(self.context.build())
            async for event in self._compact(session, state, TurnState(), fixed, force=True):
                yield event
        except SessionError as e:
            self.forget(session.key)
            yield ErrorEvent(str(e), STORAGE_ERROR)
            return
        yield self._budget_event(state.estimator.estimate(state.history, fixed))

    def _cache_at(
        self, state: SessionState, messages: list[dict[str, Any]], tools: bool, iteration: int
    ) -> tuple[int, ...]:
        """The call's cache breakpoints: none when caching is off, or when nothing can send
        this prompt again (a one-shot run's turn that can make no further call)."""
        more_calls = tools and iteration < self.defaults.max_tool_iterations
        marks: tuple[int, ...] = ()
        if self.settings.cache.enabled and (more_calls or not self.single_turn):
            marks = cache_plan.breakpoints(messages, state.last_sent)
        state.last_sent = messages
        return marks

    # -- the turn ----------------------------------------------------------------------
    def _record(
        self, session: Session, state: SessionState, message: dict[str, Any], *, send: bool = True
    ) -> None:
        # Masked here, not only in the file: the history is sent to the provider again.
        message = self.scrub.scrub_obj(message)  # type: ignore[assignment]
        # Surrogate escapes (undecodable argv bytes) become U+FFFD: no provider takes them.
        message = clean_strings(message)
        session.append(message)  # SessionError when the disk refuses: run_turn reports it
        if send:  # `send=False`: for the file only (a marker the provider must not see)
            state.history.append(to_provider(message))

    async def run_turn(
        self, session: Session, text: str, *, user_sent: bool = False
    ) -> AsyncGenerator[Event, None]:
        """`_run_turn`, after `/name args` of a custom command or skill became its message
        (core/custom_commands.py), on the command's `model` if it names one, and with the
        files and folders it @-mentions attached (core/mentions.py)."""
        expanded = self.context.commands().expand(text) if text.startswith("/") else None
        text, model = expanded[0] if expanded else text, expanded and expanded[1].model
        text = await mentions.attach(text, self.tools)
        before, self.model_name = self.model_name, model or self.model_name
        try:  # closed with this one: breaking out of the stream cancels the turn
            async with aclosing(self._run_turn(session, text, user_sent=user_sent)) as events:
                async for event in events:
                    yield event
        finally:
            self.model_name = before

    async def _run_turn(
        self, session: Session, text: str, *, user_sent: bool = False
    ) -> AsyncGenerator[Event, None]:
        """Process one user message; yields events until TurnFinished.

        After maxConsecutiveFailures failed model calls in a row the loop is stopped: a
        message that was waiting (a queue, `--json` input) is refused unread. `user_sent`
        says the user sent `text` just now (the TUI's prompt, an ACP `session/prompt`): that
        message starts afresh, as the stop's hint asks ("fix the cause, then send a message
        again"), and the model is called again.
        """
        if self.failures.stopped and user_sent:
            self.failures.reset()
        if self.failures.stopped:  # nothing is stored: the message was never taken
            message = self.failures.message()
            yield ErrorEvent(message, TOO_MANY_FAILURES, _STOPPED_HINT)
            yield TurnFinished("error", message, session.key)
            return
        fresh = session.key not in self._states
        try:
            state = self._state(session)  # healing a resumed session writes to it
        except SessionError as e:
            yield ErrorEvent(str(e), STORAGE_ERROR)
            yield TurnFinished("error", str(e), session.key)
            return
        state.turns += 1
        turn = TurnState()
        outcome: Outcome = "error"
        content = ""
        error: str | None = None
        yield TurnStarted(session=session.key, turn=state.turns, model=self.model_name)
        try:
            record = functools.partial(self._record, session, state)
            if self.hooks and fresh:
                resumed = bool(session.messages)
                async for event in hook_points.session_start(self.hooks, session, resumed, record):
                    yield event
            if self.hooks:
                fired, said = await hook_points.prompt(self.hooks, session, text)
                for event in said:
                    yield event
                if fired.blocked:  # nothing is stored or sent
                    outcome = "error"
                    content = error = fired.reason
                    raise _Refused
            # The time goes with the message, recorded beside the user's words: re-sent the
            # same in every later call (core/time_line.py), so the cached prefix holds.
            line = time_line(self.context.now())
            self._record(session, state, {"role": "user", "content": text, TIME_KEY: line})
            if self.hooks and (added := hook_points.context_message("UserPromptSubmit", fired)):
                record(added)
            if self.before_turn is not None:
                note = await self.before_turn()
                if note:
                    yield Notice("tools", note)
            async for event in self._iterate(session, state, turn):
                if isinstance(event, TurnFinished):
                    outcome, content = event.outcome, event.content
                    if outcome == "error":
                        error = content
                    break
                yield event
        except (asyncio.CancelledError, GeneratorExit) as exc:
            outcome = "cancelled"
            try:
                content = self._cancel_cleanup(session, state, turn)
            except SessionError as e:  # the disk refused the clean-up's records too
                log.error("%s", e)
                content = "".join(turn.text)
                self.forget(session.key)
            self._trace(session, state, turn, outcome, None)
            if isinstance(exc, GeneratorExit):
                raise
            yield TurnFinished("cancelled", content, session.key, self._usage(state, turn))
            return
        except _Refused:
            pass
        except SessionError as e:
            # A write failed (full disk, quota): every message saved before it stays in the
            # file. The history in memory may now hold what the file lacks (a call without
            # its result), so the next turn rebuilds it from the file.
            outcome, content = "error", str(e)
            error = content
            self.forget(session.key)
            log.error("%s", e)
            yield ErrorEvent(content, STORAGE_ERROR)
        self._trace(session, state, turn, outcome, error)
        yield TurnFinished(outcome, content, session.key, self._usage(state, turn))

    def _usage(self, state: SessionState, turn: TurnState) -> dict[str, Any]:
        return {
            "prompt_tokens": turn.prompt_tokens,
            "completion_tokens": turn.completion_tokens,
            "cost": turn.cost,
            "session_cost": state.cost,
        }

    def _cancel_cleanup(self, session: Session, state: SessionState, turn: TurnState) -> str:
        partial = "".join(turn.text)
        if turn.open_calls:
            for call_id, name in list(turn.open_calls.items()):
                self._record(
                    session,
                    state,
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "name": name,
                        "content": CANCELLED_RESULT,
                        "status": "cancelled",
                    },
                )
                t0 = turn.call_t0.pop(call_id, None)  # None: queued behind it, never started
                ms = round((time.monotonic() - t0) * 1000, 1) if t0 is not None else 0.0
                turn.tool_traces.append(ToolTrace(call_id, name, ms, False, "cancelled"))
            turn.open_calls.clear()
        else:
            # Even with no text yet: an empty marker, so a resumed session shows the turn was
            # interrupted. Never sent (history.repair drops it when the session is reloaded).
            message = {"role": "assistant", "content": partial, "interrupted": True}
            self._record(session, state, message, send=bool(partial))
        turn.text.clear()
        return partial

    def _trace(
        self,
        session: Session,
        state: SessionState,
        turn: TurnState,
        outcome: str,
        error: str | None,
    ) -> None:
        log.info(
            "turn %s of %s ended: %s after %d model call(s), %d tool call(s), %d retries%s",
            state.turns,
            session.key,
            outcome,
            turn.llm_calls,
            len(turn.tool_traces),
            turn.retries,
            f" ({error})" if error else "",
        )
        if self.tracer is not None:
            self.tracer.record(
                turn.trace(session.key, state.turns, self.model_name, outcome, error)
            )

    async def _iterate(
        self, session: Session, state: SessionState, turn: TurnState
    ) -> AsyncIterator[Event]:
        d = self.defaults
        skill.offer(self.context, self.tools)  # before the prompt: its tool line follows
        system = self.context.build()
        for notice in self.context.notices(session.key):  # files left out of the prompt
            yield notice
        fixed = state.fixed_tokens = self._fixed_tokens(system)
        compress_at = int(d.token_budget * budget_mod.COMPRESS_AT)
        last_call: str | None = None
        iteration = stops = 0
        while True:
            # maxHistoryMessages bounds what is sent in every process, not only on resume.
            if len(state.history) > d.max_history_messages:
                window = budget_mod.bound_window(
                    state.history,
                    d.max_history_messages,
                    step=budget_mod.window_step(d.max_history_messages),
                    skipped=state.skipped,
                )
                state.history, state.skipped = window.messages, window.skipped
            estimate = state.estimator.estimate(state.history, fixed)
            if estimate >= compress_at:
                async for event in self._compact(session, state, turn, fixed):
                    yield event
                estimate = state.estimator.estimate(state.history, fixed)
            yield self._budget_event(estimate)
            if estimate >= compress_at:  # the model is never called without the question
                msg = compaction.too_big(state, fixed, estimate, d)
                self._record(session, state, {"role": "assistant", "content": msg})
                yield TurnFinished("budget_exhausted", msg, session.key)
                return
            if iteration >= d.max_tool_iterations:
                msg = (
                    f"Stopped after {d.max_tool_iterations} tool iterations "
                    "(agents.defaults.maxToolIterations). Send another message to continue."
                )
                self._record(session, state, {"role": "assistant", "content": msg})
                yield TurnFinished("max_iterations", msg, session.key)
                return
            iteration += 1

            messages = [{"role": "system", "content": system}, *state.history]
            tools = self._tool_schemas()
            request = ModelRequest(
                model=self.model_name,
                messages=messages,
                tools=tools,
                max_tokens=d.max_tokens,
                temperature=d.temperature,
                cache_at=self._cache_at(state, messages, bool(tools), iteration),
                response_format=self.response_format,
            )
            calls: list[dict[str, Any]] = []
            failure: LLMError | None = None
            steps = call_model(
                self.model,
                request,
                state,
                turn,
                calls,
                defaults=self.defaults,
                scrub=self.scrub,
                sleep=self.sleep,
                cache_ttl_s=cache_plan.TTL_SECONDS[self.settings.cache.ttl],
            )
            async for event in steps:
                if isinstance(event, ErrorEvent):
                    failure = LLMError(event.message, kind=event.kind, transient=False)
                yield event
            if failure is None:
                self.failures.succeeded()
            else:
                self.failures.failed(failure.message)
                if self.failures.stopped:
                    yield ErrorEvent(self.failures.message(), TOO_MANY_FAILURES, _STOPPED_HINT)
                partial = "".join(turn.text)
                if partial:
                    self._record(
                        session,
                        state,
                        {"role": "assistant", "content": partial, "interrupted": True},
                    )
                    turn.text.clear()
                yield TurnFinished("error", failure.message, session.key)
                return

            text = "".join(turn.text)
            if not calls:
                answer = {"role": "assistant", "content": text, **turn.usage_note()}
                if self.tools is not None and self.tools.ctx.plan:
                    answer["plan"] = True  # the session keeps which answer was a plan
                self._record(session, state, answer)
                turn.text.clear()
                if self.hooks and stops < hook_points.MAX_STOP_HOOK_TURNS:
                    go_on, said = await hook_points.stop(self.hooks, session, stops > 0)
                    for event in said:
                        yield event
                    if go_on is not None:
                        stops += 1
                        self._record(session, state, {"role": "user", "content": go_on})
                        yield Notice("hook", f"a Stop hook sent the model on: {go_on}")
                        continue
                yield TurnFinished("final", text, session.key)
                return

            self._record(
                session,
                state,
                {
                    "role": "assistant",
                    "content": text or None,
                    "tool_calls": calls,
                    **turn.usage_note(),
                },
            )
            turn.text.clear()
            turn.open_calls = {c["id"]: c["function"]["name"] for c in calls}
            stuck: StuckDetected | None = None
            for call in calls:
                signature = None
                tool_events = run_tool(
                    call,
                    iteration,
                    state,
                    turn,
                    settings=self.settings,
                    tools=self.tools,
                    confirm=self.confirm,
                    record=functools.partial(self._record, session, state),
                    session_key=session.key,
                    hooks=self.hooks,
                    session=session,
                    nested=self.context.nested(session.key, state.history),
                )
                async for event in tool_events:
                    if isinstance(event, ToolCallStarted):
                        signature = canonical_call(event.name, event.arguments)
                    yield event
                if signature is not None and signature == last_call and stuck is None:
                    fn = call["function"]
                    stuck = StuckDetected(fn["name"], fn["arguments"], STUCK_MESSAGE)
                last_call = signature
            if stuck is not None:
                self._record(session, state, {"role": "system", "content": STUCK_MESSAGE})
                yield stuck

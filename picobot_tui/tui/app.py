"""The full-screen app: composes the panes and runs the agent loop in a worker.

Data flow (Textual's rule, messages up and attributes down): the turn runs in an exclusive
async worker that iterates `runtime.loop.run_turn()` and hands each event to the EventRouter,
which calls the panes' small APIs. Panes post messages (Submitted, Selected, CopyRequested) up
to the app. Neither this module nor the widgets import litellm: the model client is warmed in
a thread worker after the first frame.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import aclosing
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

import picobot_tui.styles
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.tui import (
    checkpoint_actions,
    compact_action,
    context_actions,
    keys,
    mcp_wiring,
    plan_actions,
    side_panes,
    toasts,
)
from picobot_tui.tui.commands import (
    SLASH_COMMANDS,
    parse_slash,
    slash_action,
)
from picobot_tui.tui.exit_signals import ExitSignals
from picobot_tui.tui.idle_gc import IdleCollector
from picobot_tui.tui.message_queue import MessageQueue
from picobot_tui.tui.peek import peek_ui
from picobot_tui.tui.prompt_history import PromptHistory, load_into
from picobot_tui.tui.turn_lifecycle import TurnLifecycle
from picobot_tui.tui.view_events import (
    AppStarted,
    AppStarting,
    ConversationCleared,
    NoticeShown,
    UserSent,
    ViewEvent,
)
from picobot_tui.widgets.block_text import code_blocks
from picobot_tui.widgets.blocks import Block
from picobot_tui.widgets.budget_gauge import BudgetGauge
from picobot_tui.widgets.conversation import ConversationPane
from picobot_tui.widgets.prompt import PromptArea
from picobot_tui.widgets.status_bar import StatusBar
from picobot_tui.widgets.tool_timeline import ToolTimeline
from picobot_tui.widgets.typing_monitor import TypingMonitor

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.approval import ApprovalRequest, Decision, Denied
    from picobot_tui.core.llm.model import ModelClient
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.tui.checkpoint_host import AppHost
    from picobot_tui.tui.router import EventRouter
    from picobot_tui.tui.session_switcher import SessionSwitcher

log = logging.getLogger("picobot")

STYLES = Path(picobot_tui.styles.__file__).parent
STREAM_INTERVAL = 0.15
"""Seconds between appends of streamed text to the screen. Each append costs a full layout
pass (30-90 ms here); at 0.08 s a key press waited behind them, p95 116 ms while 200
tokens/s streamed, 71 ms at 0.15 s (bench #5)."""


class PicobotApp(
    toasts.PlainToasts,
    checkpoint_actions.CheckpointActions,
    plan_actions.PlanActions,
    compact_action.CompactAction,
    context_actions.ContextActions,
    App[int],
):
    """picobot's TUI."""

    TITLE = "picobot"
    CSS_PATH = STYLES / "app.tcss"
    AUTO_FOCUS = "#prompt-input"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]
    BINDINGS: ClassVar = keys.bindings()  # ids and defaults in tui/keys.py (`ui.keys`)

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        options: RunOptions | None = None,
        model: str | None = None,
        session: str | None = None,
        workspace: Path | None = None,
        model_client: ModelClient | None = None,
        runtime: Runtime | None = None,
        clock: Callable[[], float] = time.monotonic,
        deterministic: bool = False,
        wrap_model: Callable[[ModelClient, Settings], ModelClient] | None = None,
    ) -> None:
        """Without `settings` the app loads them (from `options`) after its first frame, so
        the window appears before pydantic-settings and the core are imported.

        `deterministic` (tests, screenshots): no cursor blink, no live timers, no
        throttling of streamed text."""
        super().__init__()
        self.settings: Settings | None = settings
        self.options = options or RunOptions(model=model, session=session, workspace=workspace)
        self._model_client, self._wrap_model = model_client, wrap_model
        self.runtime: Runtime | None = runtime
        self.clock = clock
        self.deterministic = deterministic
        self.queue = MessageQueue(lambda queue: self.prompt.set_queue(queue))
        self.typing = TypingMonitor()
        """The user's key presses; streamed text waits a little after one."""
        self.ready = False
        """Settings, runtime and session are loaded (messages sent before wait in `queue`)."""
        self.start_error: RunError | None = None
        """Why the app exited while starting (e.g. a config error), for `run_app`."""
        self.lifecycle = TurnLifecycle()
        """The turn's state; control flow reads it, the router moves it and shows it."""
        self.idle_gc = IdleCollector()
        self._unmounted = False
        self.exit_signals = ExitSignals(self._on_signal)
        self.ctrl_c = keys.DoublePress()
        self.prompt_history = PromptHistory()
        self.key_map: dict[str, str] = {}
        self.sessions: SessionSwitcher
        self.router: EventRouter
        """Made on mount (it holds the panes)."""

    # -- layout ------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusBar()
        with Horizontal(id="body"):
            yield ConversationPane(
                id="conversation",
                stream_interval=0 if self.deterministic else STREAM_INTERVAL,
                typing=self.typing,
            )
            with Vertical(id="side"):
                yield BudgetGauge(id="gauge")
                yield ToolTimeline(id="timeline", clock=self.clock, live=not self.deterministic)
        yield PromptArea(SLASH_COMMANDS, cursor_blink=not self.deterministic, id="prompt")
        yield Footer()

    @property
    def conversation(self) -> ConversationPane:
        return self.query_one(ConversationPane)

    @property
    def timeline(self) -> ToolTimeline:
        return self.query_one(ToolTimeline)

    @property
    def gauge(self) -> BudgetGauge:
        return self.query_one(BudgetGauge)

    @property
    def prompt(self) -> PromptArea:
        return self.query_one(PromptArea)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def main_screen(self) -> Screen:
        return self.screen_stack[0]

    async def on_mount(self) -> None:
        from picobot_tui.tui.router import EventRouter

        self.router = EventRouter(
            self.conversation,
            self.timeline,
            self.gauge,
            self.status,
            lifecycle=self.lifecycle,
            ring=self.ring,
            clock=self.clock,
        )
        self.theme_changed_signal.subscribe(self, lambda _theme: side_panes.rich_theme(self))
        if not self.is_headless:
            self.exit_signals.install()
        if self.settings is not None:
            from picobot_tui.tui import trust

            if not trust.pending(self.settings, self.options):
                await self._start()
                return
        else:
            # Paint first: the settings (pydantic-settings) and the core take ~0.2 s to import.
            self._apply_ui(peek_ui())
            await self.router.apply(AppStarting(self.options.model or ""))
        # In a worker: the trust question (tui/trust.py) waits there for the user's answer.
        self.call_after_refresh(lambda: self.run_worker(self._start(), group="start"))

    def _apply_ui(self, ui: dict[str, Any]) -> None:
        """Theme and side panes from the `ui` settings (or a peek at them)."""
        if ui.get("theme") in self.available_themes:
            self.theme = ui["theme"]
        side_panes.rich_theme(self)
        side_panes.apply_ui(self.main_screen, ui)
        if "keys" in ui:  # `ui.keys`; a bad entry is a warning in the conversation
            self.key_map = keys.apply_keymap(self, ui["keys"], self.router.apply)

    async def _start(self) -> None:
        """Load settings (if not given), build the runtime, open the session."""
        from picobot_tui.tui import startup_gc

        try:
            loaded = await self._load()
        finally:
            startup_gc.resume()
        if not loaded:
            return
        self.ready = True
        await self.load_commands()
        self.refresh_bindings()
        mcp_wiring.start_after_paint(self, self.runtime, self.router.apply)
        self.warm_model()  # installs the idle collector once LiteLLM is imported
        self.run_worker(
            partial(load_into, self.prompt_history, self.prompt, self.runtime, self.settings),
            thread=True,
            exit_on_error=False,
        )
        await self._send_queued()  # typed and sent while starting

    async def _load(self) -> bool:
        """False when the app is exiting with `start_error` instead."""
        if self.settings is None:
            from picobot_tui.run.context import load_checked_settings

            try:
                self.settings, _warnings = load_checked_settings(self.options)
            except RunError as e:
                self.start_error = e
                self.exit(e.code, return_code=e.code)
                return False
        settings = self.settings
        self._apply_ui(settings.ui.model_dump())
        from picobot_tui.tui import trust
        from picobot_tui.tui.loading import ready_runtime

        try:
            trusted = await trust.settle(self, settings, self.options)
            self.runtime = ready_runtime(
                settings,
                self.options,
                self.runtime,
                confirm=self.confirm,
                model_client=self._model_client,
                log_to_file=not self.deterministic,
                trusted=trusted,
                wrap_model=self._wrap_model,
            )
        except RunError as e:
            self.start_error = e
            self.exit(e.code, return_code=e.code)
            return False
        from picobot_tui.tui.session_switcher import SessionSwitcher

        self.sessions = SessionSwitcher(
            self.runtime,
            token_budget=settings.agents.defaults.token_budget,
            show=self.router.apply,
            notify=self.notify,
            busy=lambda: self.lifecycle.running,
            push_screen=self.push_screen,
        )
        await self.router.apply(
            AppStarted(self.runtime.loop.model_name, settings.agents.defaults.token_budget)
        )
        self.set_mode(self.mode)  # `--plan`, or switched while it was starting
        if not trusted:
            self.status.read_only = True
            await self.router.apply(trust.untrusted_notice(self.runtime))
        await self.sessions.start(self.options.session)
        return True

    def _start_idle_gc(self) -> None:
        if self._unmounted:
            return
        self.idle_gc.install()
        self.set_interval(1.0, self._idle_gc_tick)

    def _idle_gc_tick(self) -> None:
        self.router.cache_tick(self.clock())  # the cache cell's countdown, once a second
        self.idle_gc.tick(
            now=time.monotonic(), last_input=self.typing.last_key_time, busy=self.lifecycle.running
        )

    async def on_unmount(self) -> None:
        self._unmounted = True
        self.idle_gc.uninstall()
        await mcp_wiring.close(self.runtime, self.exit_signals)  # every way out ends here
        self.exit_signals.uninstall()

    def _on_signal(self, code: int) -> None:
        """SIGTERM / SIGINT (tui/exit_signals.py) cancel the turn like Esc, then exit."""
        self.run_worker(self._quit(code), group="terminate", exclusive=True)

    async def _quit(self, code: int) -> None:
        """Cancel the running turn (the session records it), then exit with `code`."""
        if self.lifecycle.running:
            self.action_interrupt()
            await self.wait_idle()
        self.exit(code, return_code=code)

    def sessions_close(self) -> None:
        """Release the open session's lock (after the app has exited)."""
        if hasattr(self, "sessions"):
            self.sessions.close()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self.typing.key_pressed()
            self.call_after_refresh(self.typing.painted)
        await super().on_event(event)

    @property
    def busy(self) -> bool:
        """The agent worker (a turn or a compaction) is running."""
        return self.lifecycle.running

    def on_resize(self) -> None:
        self.status.show_budget = side_panes.budget_in_status(self.main_screen, self.size.width)

    @work(thread=True, group="warm", exit_on_error=False)
    def warm_model(self) -> None:
        """Import and prepare the model client off the UI thread (after the first frame)."""
        from picobot_tui.tui.loading import warm_up
        from picobot_tui.tui.model_switch import complete_models

        assert self.runtime is not None and self.settings is not None
        warm_up(
            self.settings,
            self.runtime,
            deterministic=self.deterministic,
            check_credentials=self._model_client is None,
            show=self._show_from_thread,
            imported=partial(self.call_from_thread, self._start_idle_gc),
            models=partial(self.call_from_thread, complete_models, self.prompt),
            stop=lambda: self._unmounted,  # set before asyncio waits for this thread
        )

    def _show_from_thread(self, event: ViewEvent) -> None:
        # Via call_later: mypy cannot type call_from_thread with a coroutine function.
        self.call_from_thread(self.call_later, self.router.apply, event)

    # -- sending and the turn worker ---------------------------------------------------
    async def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        self.prompt_history.add(message.text)
        slash = parse_slash(message.text)
        if slash is not None and not self.is_custom(slash[0]):  # a custom one is a message
            if self._starting():
                self.prompt.text = message.text
                return
            await self.run_action(slash_action(*slash))
        elif self.lifecycle.running or not self.ready:
            self.queue.add(message.text)
        else:
            # After too many failures in a row the user's own next message starts afresh
            # (the loop resets for a message `user_sent`); queued ones wait until it went
            # through.
            await self.send(message.text, user_sent=True)

    async def send(self, text: str, *, user_sent: bool = False) -> None:
        session = await self.sessions.ensure_open()
        if session is None:
            return
        self.lifecycle.begin()
        await self.router.apply(UserSent(text))
        self.run_turn(text, user_sent)

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_turn(self, text: str, user_sent: bool = False) -> None:
        assert self.runtime is not None and self.sessions.session is not None
        events = self.runtime.loop.run_turn(self.sessions.session, text, user_sent=user_sent)
        await self.consume(events)

    async def consume(self, events: Any) -> None:
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    await self.router.apply(event)
        except asyncio.CancelledError:
            await self.router.finish_turn("cancelled")
            raise
        except Exception as e:  # the loop never raises; the app must survive if it does
            log.exception("turn failed")
            await self.router.apply(NoticeShown("error", f"internal error: {e}"))
            await self.router.finish_turn("error")

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "agent" or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        self.lifecycle.end()
        await self.sessions.refresh_budget()
        if self.lifecycle.phase != "idle":
            await self.router.finish_turn("cancelled" if self.lifecycle.cancelling else "error")
        if self.lifecycle.cancelled:
            if self.queue:  # give queued messages back for editing rather than sending them
                self.prompt.text = self.queue.give_back(self.prompt.text)
        elif self.runtime is not None and self.runtime.loop.failures.stopped:
            if self.queue:  # the loop takes no more turns: keep them until the user acts
                await self.router.apply(
                    NoticeShown(
                        "error",
                        f"{len(self.queue)} queued message(s) not sent. Send a message to "
                        "start again; the queue follows it.",
                    )
                )
        elif not self.offer_plan():  # a plan answer asks first (tui/plan_actions.py)
            await self._send_queued()

    async def _send_queued(self) -> None:
        """Send the oldest queued message, if any."""
        text = self.queue.take()
        if text is not None:
            await self.send(text)

    def action_interrupt(self) -> None:
        if self.lifecycle.cancel():
            self.workers.cancel_group(self, "agent")

    async def wait_idle(self) -> None:
        """Wait for the running turn (if any) to end."""
        for worker in list(self.workers):
            if worker.group == "agent" and not worker.is_finished:
                await worker.wait()

    async def action_quit(self) -> None:
        if self.lifecycle.running and keys.ask_to_quit(self, self._on_signal):
            return  # a turn runs: the dialog asks first
        await self._quit(0)

    async def action_interrupt_or_quit(self) -> None:
        """Ctrl+C (when nothing is selected to copy): see tui/keys.py."""
        match self.ctrl_c.press(running=self.lifecycle.running):
            case "interrupt":
                self.action_interrupt()
            case "quit":
                await self._quit(0)
            case _:
                self.notify(keys.again_hint(self.key_map), timeout=self.ctrl_c.window)

    def on_prompt_area_scroll_requested(self, message: PromptArea.ScrollRequested) -> None:
        keys.scroll_transcript(self.conversation, message.key)

    # -- approval and bell -------------------------------------------------------------
    async def confirm(self, request: ApprovalRequest) -> Decision | Denied:
        """The loop's `confirm` coroutine: the approval modal (tui/approval.py)."""
        # Imported here: the modal and config writing are not needed for the first frame.
        from picobot_tui.tui.approval import ask

        # a turn runs only once settings and the runtime are loaded
        assert self.settings is not None and self.runtime is not None
        decision = await ask(self, self.settings, self.runtime.tools.ctx, request)
        self.router.approval_answered(request.id, decision)
        return decision

    def ring(self) -> None:
        if self.settings is None:
            return
        mode = self.settings.ui.bell
        if mode == "always" or (mode == "unfocused" and not self.app_focus):
            self.bell()

    # -- pane messages -----------------------------------------------------------------
    async def on_tool_timeline_selected(self, message: ToolTimeline.Selected) -> None:
        await self.conversation.show_call(message.call_id)

    def on_block_copy_requested(self, message: Block.CopyRequested) -> None:
        self.copy(message.text, message.what)

    def copy(self, text: str | None, what: str) -> None:
        if not text:
            self.notify(f"Nothing to copy ({what})", severity="warning")
            return
        from picobot_tui.tui.clipboard import copy_text

        self.notify(f"Copied {what} ({len(text)} chars){copy_text(self, text)}")

    # -- actions (keys, slash commands, palette) ---------------------------------------
    MAIN_SCREEN_ACTIONS: ClassVar = {
        "sessions",
        "new_session",
        "toggle_timeline",
        "toggle_gauge",
        "interrupt_or_rewind",
    }

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The pane keys only apply (and only show in the footer) on the main screen."""
        return not (action in self.MAIN_SCREEN_ACTIONS and self.screen is not self.main_screen)

    # -- slash commands and palette entries (tui/commands.py names these actions) ------
    async def action_model(self, name: str = "") -> None:
        from picobot_tui.tui.model_switch import open_picker, switch_model

        if not name:  # the picker; LiteLLM's list is imported only for a real client
            return open_picker(self, with_litellm=self._model_client is None)

        assert self.runtime is not None
        await switch_model(
            self.runtime, name, real=self._model_client, show=self.router.apply, notify=self.notify
        )

    async def action_resume(self, session_id: str) -> None:
        await self.sessions.resume(session_id)

    async def action_clear(self) -> None:
        await self.router.apply(ConversationCleared())

    def action_warn(self, text: str) -> None:
        self.notify(text, severity="warning")

    def _starting(self) -> bool:
        if not self.ready:
            self.notify("Still starting: try again in a moment")
        return not self.ready

    async def action_new_session(self) -> None:
        if not self._starting():
            await self.sessions.new()

    def action_sessions(self) -> None:
        if not self._starting():
            self.sessions.browse()

    def action_export(self) -> None:
        self.sessions.export()

    def action_toggle_timeline(self) -> None:
        side_panes.toggle(self.main_screen, "-hide-timeline")

    def action_toggle_gauge(self) -> None:
        side_panes.toggle(self.main_screen, "-hide-gauge")

    def action_copy_last(self) -> None:
        self.copy(self.conversation.last_response(), "last response")

    def action_copy_code(self) -> None:
        blocks = code_blocks(self.conversation.last_response() or "")
        self.copy(blocks[-1] if blocks else None, "code block")

    def action_permissions(self) -> None:
        from picobot_tui.tui import permissions  # the list and config editing load lazily

        if not self._starting() and self.settings is not None and self.runtime is not None:
            permissions.show(self, self.settings, self.runtime.tools.ctx)

    def action_mcp(self) -> None:
        if not self._starting():
            mcp_wiring.show(self, self.runtime)


if TYPE_CHECKING:  # mypy checks the app is all its mixins use of it

    def _is_an_app_host(app: PicobotApp) -> AppHost:  # and so a CheckpointHost
        return app

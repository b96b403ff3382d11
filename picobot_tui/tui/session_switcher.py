"""Which session the TUI is on: start, new, resume (from an id or the browser), export.

A new session is opened (and its file created) only when the first message is sent, so
opening and closing the app leaves no empty sessions behind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.core.events import BudgetChanged, Event
from picobot_tui.core.sessions import Session, SessionError
from picobot_tui.tui.view_events import HistoryLoaded, PanesCleared, SessionLabelled, ViewEvent

if TYPE_CHECKING:
    from picobot_tui.run.runtime import Runtime

Show = Callable[[Event | ViewEvent], Awaitable[None]]
"""Applies an event to the panes (the app passes `EventRouter.apply`)."""
Notify = Callable[..., None]
"""`App.notify`: message, then `severity=` and `timeout=` keywords."""
PushScreen = Callable[[Any, Callable[[Any], Awaitable[None]]], Any]
"""`App.push_screen(screen, callback)`."""


def short_key(key: str) -> str:
    return key.removeprefix("cli:")


class SessionSwitcher:
    """Owns the open Session (and its lock) for the app.

    It sees no app: it reads the runtime, asks `busy()`, reports with `notify`, and shows
    what changes as events through `show` (the router applies them)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        token_budget: int,
        show: Show,
        notify: Notify,
        busy: Callable[[], bool],
        push_screen: PushScreen,
    ) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self.token_budget = token_budget
        self._show_event = show
        self.notify = notify
        self.is_busy = busy
        self.push_screen = push_screen
        self.session: Session | None = None
        self.key = self.store.new_key("cli")

    async def start(self, raw: str | None) -> None:
        if raw:
            await self.resume(raw)
        else:
            await self._show_event(SessionLabelled(short_key(self.key) + " (new)"))

    async def ensure_open(self) -> Session | None:
        """The open session, opening (creating) it on first use."""
        if self.session is None:
            try:
                self.session = self.store.open(
                    self.key, model=self.runtime.loop.model_name, source="tui"
                )
            except SessionError as e:
                self.notify(str(e), severity="error", timeout=10)
                return None
            await self._show_event(SessionLabelled(short_key(self.key)))
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.runtime.loop.forget(self.session.key)
            self.session.close()
            self.session = None

    def _busy(self) -> bool:
        if self.is_busy():
            self.notify("The agent is working: press Esc to interrupt it first.")
            return True
        return False

    async def new(self) -> None:
        if self._busy():
            return
        self.close()
        self.key = self.store.new_key("cli")
        await self._show_event(PanesCleared(self.token_budget))
        await self._show_event(SessionLabelled(short_key(self.key) + " (new)"))
        self.notify("New session")

    async def resume(self, raw: str) -> bool:
        """Open a stored session and show it: messages, tool calls, budget."""
        if self._busy():
            return False
        try:
            key, note = self.store.resolve_with_note(raw)
        except SessionError as e:
            self.notify(str(e), severity="error", timeout=10)
            return False
        if note:  # `latest` came from another workspace: say so before showing it
            self.notify(note, severity="warning", timeout=10)
        if self.session is not None and self.session.key == key:
            return True
        self.close()
        try:
            session = self.store.open(key, model=self.runtime.loop.model_name, create=False)
        except SessionError as e:
            self.notify(str(e), severity="error", timeout=10)
            return False
        self.session, self.key = session, key
        await self._show(session)
        return True

    async def _show(self, session: Session) -> None:
        await self._show_event(PanesCleared(self.token_budget))
        await self._show_event(HistoryLoaded(session.messages))
        await self.refresh_budget()
        await self._show_event(SessionLabelled(short_key(session.key)))
        title = session.info.title or short_key(session.key)
        self.notify(f"Resumed: {title}")

    async def refresh_budget(self) -> None:
        """Show the loop's current context estimate (after a turn, or on resume)."""
        if self.session is None:
            return
        try:
            budget = self.runtime.loop.budget(self.session)
        except Exception:  # the gauge is informative; never let it break the app
            return
        await self._show_event(
            BudgetChanged(budget.estimated_tokens, budget.budget, budget.threshold)
        )

    def browse(self) -> None:
        from picobot_tui.widgets.session_browser import SessionBrowserScreen

        self.push_screen(SessionBrowserScreen(self.store), self._browsed)

    async def _browsed(self, result: tuple[str, str | None] | None) -> None:
        if not result:
            return
        action, key = result
        if action == "resume" and key:
            await self.resume(key)
        elif action == "new":
            await self.new()

    def export(self) -> Path | None:
        if self.session is None:
            self.notify("Nothing to export yet: send a message first")
            return None
        from picobot_tui.core.sessions.export import default_export_dir, exported_message

        try:
            path = self.store.export_file(self.session.key, default_export_dir())
        except (OSError, SessionError) as e:
            self.notify(f"Export failed: {e}", severity="error")
            return None
        self.notify(exported_message(path))
        return path

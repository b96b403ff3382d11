"""Which session the TUI is on: start, new, resume (from an id or the browser), export.

A new session is opened (and its file created) only when the first message is sent, so
opening and closing the app leaves no empty sessions behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from picobot_tui.core.sessions import Session, SessionError

if TYPE_CHECKING:
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.tui.app import PicobotApp


def short_key(key: str) -> str:
    return key.removeprefix("cli:")


class SessionSwitcher:
    """Owns the open Session (and its lock) for the app."""

    def __init__(self, app: PicobotApp, runtime: Runtime) -> None:
        self.app = app
        self.runtime = runtime
        self.store = runtime.store
        self.session: Session | None = None
        self.key = self.store.new_key("cli")

    async def start(self, raw: str | None) -> None:
        if raw:
            await self.resume(raw)
        else:
            self.app.status.session = short_key(self.key) + " (new)"

    def ensure_open(self) -> Session | None:
        """The open session, opening (creating) it on first use."""
        if self.session is None:
            try:
                self.session = self.store.open(self.key, model=self.runtime.loop.model_name)
            except SessionError as e:
                self.app.notify(str(e), severity="error", timeout=10)
                return None
            self.app.status.session = short_key(self.key)
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.runtime.loop.forget(self.session.key)
            self.session.close()
            self.session = None

    def _busy(self) -> bool:
        if self.app.busy:
            self.app.notify("The agent is working: press Esc to interrupt it first.")
            return True
        return False

    async def _reset_panes(self) -> None:
        app = self.app
        await app.conversation.clear()
        app.timeline.clear()
        app.gauge.reset()
        assert app.settings is not None  # sessions switch only once settings are loaded
        app.gauge.set_budget(0, app.settings.agents.defaults.token_budget, 0)
        app.status.budget_summary = app.gauge.summary()

    async def new(self) -> None:
        if self._busy():
            return
        self.close()
        self.key = self.store.new_key("cli")
        await self._reset_panes()
        self.app.status.session = short_key(self.key) + " (new)"
        self.app.notify("New session")

    async def resume(self, raw: str) -> bool:
        """Open a stored session and show it: messages, tool calls, budget."""
        if self._busy():
            return False
        try:
            key = self.store.resolve(raw)
        except SessionError as e:
            self.app.notify(str(e), severity="error", timeout=10)
            return False
        if self.session is not None and self.session.key == key:
            return True
        self.close()
        try:
            session = self.store.open(key, model=self.runtime.loop.model_name, create=False)
        except SessionError as e:
            self.app.notify(str(e), severity="error", timeout=10)
            return False
        self.session, self.key = session, key
        await self._show(session)
        return True

    async def _show(self, session: Session) -> None:
        app = self.app
        await self._reset_panes()
        calls = await app.conversation.load_history(session.messages)
        for block in calls:
            app.timeline.add_call(block.call_id, block.tool_name, block.arguments)
            app.timeline.finish_call(block.call_id, block.status, block.duration_ms)
        self.refresh_budget()
        app.status.session = short_key(session.key)
        title = session.info.title or short_key(session.key)
        app.notify(f"Resumed: {title}")

    def refresh_budget(self) -> None:
        """Show the loop's current context estimate (after a turn, or on resume)."""
        if self.session is None:
            return
        try:
            budget = self.runtime.loop.budget(self.session)
        except Exception:  # the gauge is informative; never let it break the app
            return
        self.app.gauge.set_budget(budget.estimated_tokens, budget.budget, budget.threshold)
        self.app.status.budget_summary = self.app.gauge.summary()

    def browse(self) -> None:
        from picobot_tui.widgets.session_browser import SessionBrowserScreen

        self.app.push_screen(SessionBrowserScreen(self.store), self._browsed)

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
            self.app.notify("Nothing to export yet: send a message first")
            return None
        try:
            path = self.store.export_file(self.session.key, Path.cwd())
        except (OSError, SessionError) as e:
            self.app.notify(f"Export failed: {e}", severity="error")
            return None
        self.app.notify(f"Exported to {path}")
        return path

"""`/compact` in the TUI: the history compressed now, in the agent worker (a mixin of
`PicobotApp`, which it reaches as `self`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

if TYPE_CHECKING:
    from picobot_tui.tui.checkpoint_host import AppHost


class CompactAction:
    """Mixed into PicobotApp; `self` is the app, seen as an `AppHost` (app.py checks it)."""

    def _app(self) -> AppHost:
        return self  # type: ignore[return-value]

    def action_compact(self) -> None:
        app = self._app()
        if app.lifecycle.running:
            app.notify("Wait for the turn to finish (or Esc) before compacting")
            return
        if app.sessions.session is None:
            app.notify("Nothing to compact yet")
            return
        app.lifecycle.begin()
        app.router.state = "compacting"
        app.run_compact()

    @work(exclusive=True, group="agent", exit_on_error=False)
    async def run_compact(self) -> None:
        app = self._app()
        assert app.runtime is not None and app.sessions.session is not None
        before = app.router.compressions
        await app.consume(app.runtime.loop.compact(app.sessions.session))
        if app.router.compressions == before:
            app.notify("Nothing to compress: the history is already small")
        if app.lifecycle.outcome is None:
            await app.router.finish_turn("final")

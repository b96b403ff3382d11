"""`/context` and `/hooks` in the TUI: what the next call sends, and the hooks that run (a
mixin of `PicobotApp`, which it reaches as `self`). The report is core/context_report.py's,
the same as `picobot context` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picobot_tui.tui.hooks_text import hooks_text
from picobot_tui.tui.view_events import NoticeShown

if TYPE_CHECKING:
    from picobot_tui.tui.checkpoint_host import AppHost


class ContextActions:
    """Mixed into PicobotApp; `self` is the app, seen as an `AppHost` (app.py checks it)."""

    def _app(self) -> AppHost:
        return self  # type: ignore[return-value]

    def _started(self) -> bool:
        app = self._app()
        if not app.ready or app.runtime is None:
            app.notify("Still starting: try again in a moment")
            return False
        return True

    async def action_hooks(self) -> None:
        app = self._app()
        if self._started() and app.runtime is not None:
            await app.router.apply(NoticeShown("info", hooks_text(app.runtime.loop.hooks)))

    async def action_context(self) -> None:
        app = self._app()
        if not self._started() or app.runtime is None:
            return
        # Imported here: the report is not needed for the first frame.
        from picobot_tui.core.context_report import context_report, report_text
        from picobot_tui.core.textsafe import terminal_safe

        runtime = app.runtime
        report = context_report(runtime.loop, app.sessions.session)
        text = terminal_safe(runtime.scrub(report_text(report)))
        await app.router.apply(NoticeShown("info", text))

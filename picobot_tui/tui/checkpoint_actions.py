"""The app's checkpoint actions: `/rewind`, `/diff`, Esc Esc, the timeline's `+a −b` and diffs.

A mixin of `PicobotApp` (app.py stays small): the actions and message handlers here only
import their work on first use (tui/rewind.py, tui/diff_view.py, core/checkpoints), so the
first frame loads nothing of checkpoints. Esc is `interrupt_or_rewind`: it interrupts a
running turn, and pressed twice on an empty prompt while idle opens the rewind list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picobot_tui.tui.keys import DoublePress

if TYPE_CHECKING:
    from picobot_tui.tui.checkpoint_host import CheckpointHost

ESC_WINDOW = 1.0
"""Seconds within which a second Esc on an idle, empty prompt opens the rewind list."""


class CheckpointActions:
    """Mixed into PicobotApp; `self` is the app, seen as a `CheckpointHost` (app.py checks
    that it is one)."""

    _esc: DoublePress | None = None
    _pending_changes: set[str] | None = None

    def _host(self) -> CheckpointHost:
        return self  # type: ignore[return-value]  # the app; app.py checks it is a host

    async def action_interrupt_or_rewind(self) -> None:
        app = self._host()
        if app.lifecycle.running:
            app.action_interrupt()
            return
        if self._esc is None:
            self._esc = DoublePress(app.clock, ESC_WINDOW)
        if app.prompt.text.strip() or not app.ready:
            self._esc.press(running=True)  # disarm: Esc on a draft is not a rewind
            return
        if self._esc.press(running=False) == "quit":
            await self.action_rewind()

    async def action_rewind(self) -> None:
        from picobot_tui.tui.rewind import open_rewind

        await open_rewind(self._host())

    async def action_diff(self, scope: str = "turn") -> None:
        from picobot_tui.tui.diff_view import open_diff

        await open_diff(self._host(), "session" if scope == "session" else "turn")

    # -- the timeline: +a −b per call, Enter opens its diff ---------------------------------
    def on_tool_timeline_finished(self, message: Any) -> None:
        from picobot_tui.tui.diff_view import CHANGING_TOOLS

        if message.name not in CHANGING_TOOLS or message.status != "ok":
            return
        if self._pending_changes is None:
            self._pending_changes = set()
            app = self._host()
            app.call_after_refresh(self._look_up_changes)
        self._pending_changes.add(message.call_id)

    def _look_up_changes(self) -> None:
        from picobot_tui.tui.diff_view import show_call_changes

        calls, self._pending_changes = self._pending_changes or set(), None
        app = self._host()
        app.run_worker(show_call_changes(app, calls), group="call-changes", exit_on_error=False)

    async def on_tool_timeline_diff_requested(self, message: Any) -> None:
        from picobot_tui.tui.diff_view import open_call_diff

        await open_call_diff(self._host(), message.call_id)

    def on_diff_review_screen_revert_requested(self, message: Any) -> None:
        from picobot_tui.tui.diff_view import revert_file

        # A worker: it may wait for the conflict question, which a handler cannot.
        app = self._host()
        app.run_worker(revert_file(app, message), group="revert", exclusive=True)

    async def on_diff_review_screen_scope_requested(self, message: Any) -> None:
        from picobot_tui.tui.diff_view import rescope

        await rescope(self._host(), message.scope)

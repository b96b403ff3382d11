"""What the checkpoint actions (`/rewind`, `/diff`, the timeline's diffs) use of the app.

`tui/checkpoint_actions.py`, `tui/rewind.py` and `tui/diff_view.py` take the app as a
`CheckpointHost`: mypy checks every use against this list, and `app.py` checks that
`PicobotApp` is one, without those modules importing app.py (which imports them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from picobot_tui.run.options import RunOptions
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.tui.message_queue import MessageQueue
    from picobot_tui.tui.router import EventRouter
    from picobot_tui.tui.session_switcher import SessionSwitcher
    from picobot_tui.tui.turn_lifecycle import TurnLifecycle
    from picobot_tui.widgets.conversation import ConversationPane
    from picobot_tui.widgets.prompt import PromptArea
    from picobot_tui.widgets.status_bar import StatusBar


class CheckpointHost(Protocol):
    """The app as the checkpoint actions see it."""

    @property
    def runtime(self) -> Runtime | None: ...
    @property
    def ready(self) -> bool: ...
    @property
    def lifecycle(self) -> TurnLifecycle: ...
    @property
    def sessions(self) -> SessionSwitcher: ...
    @property
    def router(self) -> EventRouter: ...
    @property
    def prompt(self) -> PromptArea: ...
    @property
    def clock(self) -> Callable[[], float]: ...

    def action_interrupt(self) -> None: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...

    def run_worker(
        self,
        work: Awaitable[Any],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Any: ...

    def call_after_refresh(
        self, callback: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bool: ...


class AppHost(CheckpointHost, Protocol):
    """The app as its other mixins see it (tui/plan_actions.py, tui/compact_action.py)."""

    @property
    def options(self) -> RunOptions: ...
    @property
    def status(self) -> StatusBar: ...
    @property
    def conversation(self) -> ConversationPane: ...
    @property
    def main_screen(self) -> Screen: ...
    @property
    def screen(self) -> Screen: ...
    @property
    def queue(self) -> MessageQueue: ...

    async def send(self, text: str, *, user_sent: bool = False) -> None: ...
    async def consume(self, events: Any) -> None: ...
    def run_compact(self) -> Any: ...
    async def run_action(self, action: str) -> Any: ...

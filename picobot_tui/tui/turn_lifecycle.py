"""Where the app's turn is: idle, running (in which phase), cancelling, and how it ended.

The app owns one TurnLifecycle and reads it for control flow (Esc, busy checks, the idle
collector); the EventRouter moves its phase with the core's events and mirrors the phase on
the StatusBar, which only displays it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Phase = Literal[
    "starting",
    "idle",
    "thinking",
    "running tool",
    "waiting for approval",
    "retrying",
    "compacting",
]


@dataclass
class TurnLifecycle:
    """`running` spans the agent worker (a turn or a compaction), from `begin` to `end`;
    `phase` is what the status bar shows, and goes `idle` when the turn's end is shown
    (which can come before the worker has finished)."""

    phase: Phase = "starting"
    running: bool = False
    cancelling: bool = False
    """Esc (or a signal) asked to cancel the running worker."""
    outcome: str | None = None
    """How the last turn ended (`final`, `cancelled`, ...); None while it runs."""

    def begin(self) -> None:
        """The agent worker starts (a turn, or a compaction); the router sets its phase."""
        self.running = True
        self.cancelling = False
        self.outcome = None

    def cancel(self) -> bool:
        """Ask to cancel; False when nothing is running."""
        if not self.running:
            return False
        self.cancelling = True
        return True

    def end(self) -> None:
        """The agent worker has finished (however it ended)."""
        self.running = False

    @property
    def cancelled(self) -> bool:
        """The last worker was interrupted, or its turn ended cancelled."""
        return self.cancelling or self.outcome == "cancelled"

"""When the user last pressed a key, for widgets that hold work back while they type."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class TypingMonitor:
    """The last key press (time.monotonic) and whether a frame was painted since.

    The app records keys into it; streaming blocks read it to time their appends
    (widgets.streaming.append_delay)."""

    last_key_time: float | None = None
    key_painted: bool = True

    def key_pressed(self, now: float | None = None) -> None:
        """A key arrived; its frame is not painted yet."""
        self.last_key_time = time.monotonic() if now is None else now
        self.key_painted = False

    def painted(self) -> None:
        """A frame has been painted since the last key."""
        self.key_painted = True

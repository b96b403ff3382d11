"""The status bar's cache cell: how long the provider's prompt cache stays warm, counting
down from the last call ("cache 3:41"), what caching saved this session, and once the
cache went cold what the next call's re-write costs, so a user back from a pause knows
before sending. The clock is the caller's (monotonic seconds)."""

from __future__ import annotations

from picobot_tui.core.events import UsageUpdated
from picobot_tui.widgets.budget_gauge import format_cost


class CacheClock:
    """Fed each UsageUpdated with the time it came; `cell(now)` is the text and its state
    ("warm", "cold" or "" for no cell)."""

    def __init__(self) -> None:
        self.warm_until: float | None = None
        self.rewrite_cost: float | None = None
        self.saved: float | None = None

    def usage(self, event: UsageUpdated, now: float) -> None:
        if event.session_saved is not None:
            self.saved = event.session_saved
        if event.cache_ttl_s > 0:  # this call wrote or read a marked prefix
            self.warm_until = now + event.cache_ttl_s
            self.rewrite_cost = event.rewrite_cost

    def reset(self) -> None:
        """A new session: nothing is cached for it yet."""
        self.warm_until = self.rewrite_cost = self.saved = None

    def cell(self, now: float) -> tuple[str, str]:
        parts: list[str] = []
        state = ""
        if self.warm_until is not None:
            left = int(self.warm_until - now)
            if left > 0:
                state = "warm"
                parts.append(f"cache {left // 60}:{left % 60:02d}")
            else:
                state = "cold"
                cost = f" (+{format_cost(self.rewrite_cost)})" if self.rewrite_cost else ""
                parts.append(f"cache cold: the next call re-writes it{cost}")
        if self.saved is not None and (self.saved > 0 or parts):
            parts.append(f"saved {format_cost(self.saved)}")
            state = state or "warm"
        return " · ".join(parts), state

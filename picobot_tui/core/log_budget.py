"""A budget of log bytes for one source that does not answer to picobot (a server's stderr,
the MCP SDK's records about what a server sent): a token bucket, so a flood is cut to a
burst and then a steady rate instead of filling the log (issue 21: 500 MB in 15 s)."""

from __future__ import annotations

import time
from collections.abc import Callable

BURST_BYTES = 1 << 20
"""Log bytes a source may write at once (a chatty start-up fits: mcp-server-time writes
none, server-everything ~1 KB)."""
RATE_BYTES = 64 << 10
"""Log bytes per second a source earns after its burst: a 15 s flood logs ~2 MiB."""


class LogBudget:
    """Once spent, it lets records through again only when a second's worth has come back:
    a steady flood is logged in bursts with one count between them, not a count per line."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.tokens = float(BURST_BYTES)
        self.at = clock()
        self.spent = False

    def take(self, cost: int) -> bool:
        """Whether a record of `cost` bytes may be logged now (and pay for it)."""
        now = self.clock()
        self.tokens = min(float(BURST_BYTES), self.tokens + (now - self.at) * RATE_BYTES)
        self.at = now
        if self.tokens < max(cost, RATE_BYTES if self.spent else 0):
            self.spent = True
            return False
        self.spent = False
        self.tokens -= cost
        return True

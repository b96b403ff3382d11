"""Full garbage collections at moments the user won't feel them.

CPython runs a full (generation-2) collection every ~10 younger ones; with a TUI's widgets,
segments and caches alive, each took 70-190 ms here, with the event loop stopped, so a key
press typed while an answer streamed waited behind one (bench #5: p95 ~60 ms against 4 ms
idle). `IdleCollector` leaves generations 0 and 1 to CPython (a millisecond or two each) and
runs the full collections itself: when the app is neither running a turn nor receiving
keys, or, so memory stays bounded in a very long turn, once far more are due than usual.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

NEVER = 1_000_000
"""A generation-2 threshold CPython never reaches: its own full collections stop."""


class IdleCollector:
    """Call `tick()` about once a second; `install()` first and `uninstall()` at the end."""

    def __init__(
        self,
        *,
        due: int = 10,
        force: int = 200,
        quiet: float = 2.0,
        collect: Callable[[], object] = lambda: gc.collect(2),
    ) -> None:
        """`due`: younger collections since the last full one after which a full one runs
        once the app is quiet (CPython's default is 10); `force`: after this many it runs
        regardless; `quiet`: seconds without input (and no turn running) that count as
        quiet."""
        self.due = due
        self.force = force
        self.quiet = quiet
        self._collect = collect
        self._saved: tuple[int, int, int] | None = None
        self.collections = 0

    def install(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            gen0, gen1, _ = self._saved
            gc.set_threshold(gen0, gen1, NEVER)

    def uninstall(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def tick(self, *, now: float, last_input: float | None, busy: bool) -> bool:
        """Run a full collection if one is due and the moment is right; True if it ran."""
        pending = gc.get_count()[2]  # younger collections since the last full one
        quiet = not busy and (last_input is None or now - last_input >= self.quiet)
        if pending >= self.force or (pending >= self.due and quiet):
            self._collect()
            self.collections += 1
            return True
        return False

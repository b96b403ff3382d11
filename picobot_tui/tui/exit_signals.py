"""SIGTERM and SIGINT as requests to quit the TUI cleanly (cancel the turn, then exit).

Ctrl+C is a key in the TUI; SIGINT only comes from `kill`. A SystemExit raised from a plain
handler could stop the event loop before the session records the partial answer, so the
signals go through the loop's handlers instead.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from picobot_tui.run import inherited
from picobot_tui.run.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED

EXIT_CODES = ((signal.SIGTERM, EXIT_TERMINATED), (signal.SIGINT, EXIT_INTERRUPTED))


class ExitSignals:
    """Installs `on_signal(exit_code)` for SIGTERM (143) and SIGINT (130) on the running loop."""

    def __init__(self, on_signal: Callable[[int], None]) -> None:
        self.on_signal = on_signal
        self.installed: list[signal.Signals] = []
        self.holding = False
        """Closing: signals are caught but ignored (see `hold`)."""

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig, code in EXIT_CODES:
            if inherited.is_ignored(sig):  # the caller's choice, kept (run/inherited.py)
                continue
            try:
                loop.add_signal_handler(sig, self._fire, code)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                continue
            self.installed.append(sig)

    def _fire(self, code: int) -> None:
        if not self.holding:
            self.on_signal(code)

    def hold(self) -> None:
        """The app is closing (its MCP servers are being ended): ignore further signals
        until `uninstall`, so a second SIGTERM cannot end the process before them."""
        self.holding = True

    def uninstall(self) -> None:
        if self.installed:
            loop = asyncio.get_running_loop()
            for sig in self.installed:
                loop.remove_signal_handler(sig)
            self.installed.clear()

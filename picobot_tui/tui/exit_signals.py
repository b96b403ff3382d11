"""SIGTERM and SIGINT as requests to quit the TUI cleanly (cancel the turn, then exit).

Ctrl+C is a key in the TUI; SIGINT only comes from `kill`. A SystemExit raised from a plain
handler could stop the event loop before the session records the partial answer, so the
signals go through the loop's handlers instead.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from picobot_tui.run.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED

EXIT_CODES = ((signal.SIGTERM, EXIT_TERMINATED), (signal.SIGINT, EXIT_INTERRUPTED))


class ExitSignals:
    """Installs `on_signal(exit_code)` for SIGTERM (143) and SIGINT (130) on the running loop."""

    def __init__(self, on_signal: Callable[[int], None]) -> None:
        self.on_signal = on_signal
        self.installed: list[signal.Signals] = []

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig, code in EXIT_CODES:
            try:
                loop.add_signal_handler(sig, self.on_signal, code)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                continue
            self.installed.append(sig)

    def uninstall(self) -> None:
        if self.installed:
            loop = asyncio.get_running_loop()
            for sig in self.installed:
                loop.remove_signal_handler(sig)
            self.installed.clear()

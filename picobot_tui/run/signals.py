"""SIGINT/SIGTERM during a headless turn: cancel it so the session is recorded, then exit
with the signal's exit code."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from picobot_tui.run import inherited
from picobot_tui.run.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED


def install_signal_handlers(task: asyncio.Task[Any], received: list[int]) -> None:
    """SIGINT/SIGTERM cancel `task` and are appended to `received`; a second signal exits at
    once, without waiting for the clean-up. A signal the caller ignores stays ignored."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        if inherited.is_ignored(sig):
            continue

        def handler(sig: int = sig) -> None:
            if received:  # a second signal: stop waiting for clean-up
                raise SystemExit(EXIT_INTERRUPTED if sig == signal.SIGINT else EXIT_TERMINATED)
            received.append(sig)
            task.cancel()

        loop.add_signal_handler(sig, handler)


def signal_exit(received: list[int]) -> int:
    """The exit code for the first signal received (SIGTERM 143, otherwise 130)."""
    return EXIT_TERMINATED if received and received[0] == signal.SIGTERM else EXIT_INTERRUPTED

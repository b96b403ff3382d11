"""The console script's entry point: try the warm server first, then the cold CLI.

Nothing here or in what it imports before the hand-over loads more than the stdlib
(`python -X importtime -c 'import picobot_tui.entry'`: ~6 ms over the interpreter), so a
call the server answers never pays for Typer, pydantic or LiteLLM. Everything else, and
any call the server cannot take, goes to `picobot_tui.cli.main` in this process.
"""

from __future__ import annotations

import os
import sys


def _try_warm() -> None:
    """Exit with the warm call's status, or return to run cold (after arranging for a
    server to be started when this process exits, if the policy allows)."""
    from picobot_tui.warm import policy

    if not policy.is_warm_call(sys.argv):
        return
    rules = policy.decide(os.environ)
    if not rules.attach:
        return
    from picobot_tui.warm.client import Missed, attach

    result = attach(list(sys.argv))
    if not isinstance(result, Missed):
        sys.exit(result)
    if result.start and rules.start:
        _start_later(rules.idle_minutes, acp=policy.is_acp_call(sys.argv))


def _start_later(idle_minutes: float, *, acp: bool) -> None:
    """Start a server when this cold call exits; a cold `picobot acp` (an editor's, which
    may run for hours) starts it once its own background import is done, or at its exit
    if that comes first."""
    import atexit
    import contextlib

    from picobot_tui.warm import launch, place

    # The environment as the call got it: by its exit the cold run's own imports have
    # changed it (LiteLLM sets TIKTOKEN_CACHE_DIR), and a server imported under those
    # values would not match the next client's (it found every server stale).
    environ = dict(os.environ)
    pending = [True]

    def start(detached: bool = False) -> None:
        if not pending:
            return
        pending.clear()
        # On failure the next call runs cold too, and tries again.
        with contextlib.suppress(OSError, place.PlaceError):
            path = place.socket_path(environ)
            launch.start_background(path, idle_minutes, environ, detached=detached)

    atexit.register(start)
    if acp:
        from picobot_tui.acp.warmup import after_load

        after_load(lambda: start(detached=True))


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(143)  # run/exit_codes.EXIT_TERMINATED (not imported: typing's Final)


def main() -> None:
    """Console-script entry point."""
    import signal

    from picobot_tui.run import inherited  # first: it reads what the caller ignored

    # As cli.main does, and first: the client reads config.json (a FIFO there blocks it),
    # and SIGTERM meanwhile must exit 143, not by the default action (killed by signal 15).
    if not inherited.is_ignored(signal.SIGTERM):
        signal.signal(signal.SIGTERM, _terminated)
    _try_warm()
    from picobot_tui.cli import main as cold_main

    cold_main()

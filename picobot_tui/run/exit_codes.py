"""The process exit codes of every front end (docs/cli.md, "Exit codes"). Imports nothing:
the CLI reads them before anything heavy is loaded."""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
# An agent or provider error, a stopped turn (maxToolIterations, token budget), a session
# that could not be saved, or a declined confirmation.
EXIT_ERROR: Final = 1
# A usage or config error: bad flag, bad config, unknown session, no API key.
EXIT_USAGE: Final = 2
# 128 + the signal number, the shell's convention for a process ended by a signal.
EXIT_INTERRUPTED: Final = 130  # SIGINT, Ctrl+C
EXIT_TERMINATED: Final = 143  # SIGTERM

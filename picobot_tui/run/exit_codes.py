"""The process exit codes of every front end (docs/cli.md, "Exit codes", and `picobot
--help` show `TABLE`). Imports nothing: the CLI reads them before anything heavy is loaded."""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
# An agent or provider error, a stopped turn (maxToolIterations, token budget), too many
# failed model calls in a row, an answer that breaks --output-schema, a session that could
# not be saved, or a declined confirmation.
EXIT_ERROR: Final = 1
# A usage or config error: bad flag, bad config, unknown session, no API key.
EXIT_USAGE: Final = 2
# 128 + the signal number, the shell's convention for a process ended by a signal.
EXIT_INTERRUPTED: Final = 130  # SIGINT, Ctrl+C
EXIT_TERMINATED: Final = 143  # SIGTERM

TABLE: Final = (
    (EXIT_OK, "final", "the model answered (after a denied approval too)"),
    (EXIT_ERROR, "error", "an agent or provider error the retries did not cure"),
    (EXIT_ERROR, "error", "maxConsecutiveFailures model calls failed in a row"),
    (EXIT_ERROR, "max_iterations", "stopped at maxToolIterations"),
    (EXIT_ERROR, "budget_exhausted", "the token budget is spent"),
    (EXIT_ERROR, "invalid_output", "the answer breaks --output-schema, after one retry"),
    (EXIT_USAGE, "not_started", "a usage or config error: nothing was sent"),
    (EXIT_INTERRUPTED, "cancelled", "interrupted (SIGINT, Ctrl+C); the turn is saved"),
    (EXIT_TERMINATED, "cancelled", "terminated (SIGTERM); the turn is saved"),
)
"""(code, the `outcome` of `--output-format json`, the case), one row per case."""


def help_table() -> str:
    """The table as `picobot --help` prints it."""
    rows = "\n".join(f"  {code:>3}  {outcome:<16} {case}" for code, outcome, case in TABLE)
    return f"Exit codes (code, outcome, case):\n\n{rows}"

"""What the `agent` command line asks for, and the error a run reports to the user. Imports
nothing heavy: the TUI paints its first frame before settings or the core are loaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from picobot_tui.run.exit_codes import EXIT_USAGE


class RunError(Exception):
    """A problem the user must fix; `code` is the process exit code (see `run.exit_codes`)."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class RunOptions:
    model: str | None = None
    session: str | None = None
    workspace: Path | None = None
    max_tokens: int | None = None
    logs: bool = False
    plan: bool = False
    """Start in plan mode: no call that could change anything runs (core/plan_mode.py)."""
    ephemeral: bool = False
    """Write nothing under the picobot home: sessions, traces, logs and checkpoints go to a
    private scratch folder removed when the run ends (`run/context.open_run`)."""

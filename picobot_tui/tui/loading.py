"""What the TUI loads after its first frame: the runtime (and the log file) for its settings.

Imported lazily by the app: the run wiring pulls in the core, which the first frame must not
wait for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from picobot_tui.run.context import budget_problem
from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.approval import ApprovalRequest, Decision
    from picobot_tui.core.llm.model import ModelClient


def ready_runtime(
    settings: Settings,
    options: RunOptions,
    runtime: Runtime | None,
    *,
    confirm: Callable[[ApprovalRequest], Awaitable[Decision]],
    model_client: ModelClient | None,
    log_to_file: bool,
) -> Runtime:
    """The given runtime (asking the app's `confirm`), or a new one; RunError when the
    settings' budget cannot work (a config error, like the CLI's)."""
    if runtime is None:
        runtime = build_runtime(
            settings,
            model=options.model,
            workspace=options.workspace,
            confirm=confirm,
            model_client=model_client,
        )
        if problem := budget_problem(runtime):
            raise RunError(problem, EXIT_USAGE)
    else:
        runtime.loop.confirm = confirm
    if log_to_file:
        from picobot_tui.run.logs import setup_logging

        setup_logging(settings.log_path, runtime.scrub, to_stderr=False)
    return runtime

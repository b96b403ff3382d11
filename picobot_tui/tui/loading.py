"""What the TUI loads after its first frame: the runtime (and the log file) for its settings.

Imported lazily by the app: the run wiring pulls in the core, which the first frame must not
wait for.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from picobot_tui.run.context import budget_problem, start_model
from picobot_tui.run.exit_codes import EXIT_USAGE
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime, make_untrusted
from picobot_tui.tui.view_events import ExecNoteShown, NoticeShown, ViewEvent

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.approval import ApprovalRequest, Decision, Denied
    from picobot_tui.core.llm.model import ModelClient

log = logging.getLogger("picobot")

WrapModel = Callable[["ModelClient", "Settings"], "ModelClient"]
"""Given a runtime's new model client and the settings, the client the app uses."""


def ready_runtime(
    settings: Settings,
    options: RunOptions,
    runtime: Runtime | None,
    *,
    confirm: Callable[[ApprovalRequest], Awaitable[Decision | Denied]],
    model_client: ModelClient | None,
    log_to_file: bool,
    trusted: bool = True,
    wrap_model: WrapModel | None = None,
) -> Runtime:
    """The given runtime (asking the app's `confirm`), or a new one; RunError when the
    settings' budget cannot work (a config error, like the CLI's). With no key for the
    default model and no model chosen, the new one runs the offline demo (its `banner`).
    `wrap_model` wraps a new runtime's own model client (the CLI's warm-server relay)."""
    if runtime is None:
        model, banner = options.model, None
        if model_client is None:
            model, banner = start_model(settings, options.model)
        runtime = build_runtime(
            settings,
            model=model,
            workspace=options.workspace,
            confirm=confirm,
            model_client=model_client,
        )
        runtime.banner = banner
        if wrap_model is not None and model_client is None:
            runtime.model = runtime.loop.model = wrap_model(runtime.model, settings)
        if not trusted:  # before the budget check reads the workspace's context files
            make_untrusted(runtime)
        if problem := budget_problem(runtime):
            raise RunError(problem, EXIT_USAGE)
    else:
        runtime.loop.confirm = confirm
        if not trusted:
            make_untrusted(runtime)
    if log_to_file:
        from picobot_tui.run.logs import setup_logging

        setup_logging(settings.log_path, runtime.scrub, to_stderr=False)
    return runtime


def warm_up(
    settings: Settings,
    runtime: Runtime,
    *,
    deterministic: bool,
    check_credentials: bool,
    show: Callable[[ViewEvent], None],
    imported: Callable[[], None],
    models: Callable[[list[str]], None] = lambda names: None,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Import and prepare the model client (in a thread, after the first frame). `show`
    hands view events to the UI thread; `imported` runs once LiteLLM is imported; `models`
    gets the names `/model ` completes; `stop` says the app is exiting. With `check_credentials` (a real run, not a test's
    model client) the model's name and key are checked and LiteLLM's model list is read."""
    if runtime.banner:
        show(NoticeShown("info", runtime.banner))
    if check_credentials:
        from picobot_tui.run.context import credentials_hint

        # Offline and cheap: said as the screen comes up, not after LiteLLM's import (~5 s,
        # when a user looking for it had given up).
        if hint := credentials_hint(settings, runtime.loop.model_name, how="/model"):
            show(NoticeShown("error", hint))
    if not deterministic:  # snapshots must not depend on whether bwrap is installed
        from picobot_tui.core.tools.exec.sandbox import exec_sandbox_note

        # Probing bwrap runs a process (~7 ms): off the UI thread, and cached for exec.
        show(ExecNoteShown(exec_sandbox_note(settings.tools.exec)))
    before_import = getattr(runtime.model, "before_import", None)
    if callable(before_import) and not before_import(stop):
        return  # the warm-server relay's first call goes first; the app quit before it
    warm = getattr(runtime.model, "warm", None)
    if callable(warm):
        try:
            warm(runtime.loop.model_name)
        except Exception as e:  # a failed warm-up shows on the first real call
            log.warning("model warm-up failed: %s", e)
    problem, names = None, None
    if check_credentials:
        from picobot_tui.tui.model_switch import model_names, unknown_problem

        # Imports LiteLLM if warm() did not (the demo model): before `imported`.
        names = model_names(settings, with_litellm=True)
        problem = unknown_problem(settings, runtime.loop.model_name)
    if not deterministic:
        # Not before: the import's garbage is best collected the usual way (bench #6 RSS).
        imported()
    if problem:
        show(NoticeShown("error", problem))
    if names is not None:
        models(names)

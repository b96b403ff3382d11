"""What every `picobot agent` run does first: settings, logging, credentials, runtime and the
session to work on. Problems come out as `RunError` with a user-facing message and an exit
code, never as a traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from picobot_tui.config.settings import ConfigError, Settings, load_settings
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.llm.demo import is_demo
from picobot_tui.core.sessions import Session, SessionError, SessionNotFound
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_USAGE
from picobot_tui.run.logs import setup_logging
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime, ensure_workspace

__all__ = ["Run", "RunError", "RunOptions", "load_checked_settings", "open_run", "open_session"]


@dataclass
class Run:
    settings: Settings
    runtime: Runtime
    session: Session
    warnings: list[str]


def load_checked_settings(opts: RunOptions) -> tuple[Settings, list[str]]:
    try:
        settings, warnings = load_settings()
    except ConfigError as e:
        raise RunError(str(e), EXIT_USAGE) from None
    if opts.max_tokens is not None:
        if opts.max_tokens < 1:
            raise RunError("--max-tokens must be a positive number of tokens.", EXIT_USAGE)
        settings.agents.defaults.max_tokens = opts.max_tokens
    if opts.workspace is not None:
        settings.agents.defaults.workspace = str(opts.workspace.expanduser().resolve())
    # Checked here, before anything is opened, so the TUI gets it as a start error too.
    ensure_workspace(settings.workspace_path)
    return settings, warnings


def credentials_problem(settings: Settings, model: str) -> str | None:
    if is_demo(model):
        return None
    from picobot_tui.core.llm.client import check_credentials

    return check_credentials(settings, model)


def credentials_hint(settings: Settings, model: str) -> str | None:
    """What to do when `model` has no usable key (None when fine). May import litellm:
    call it from a thread."""
    try:
        return credentials_problem(settings, model)
    except Exception as e:  # the first real call reports the problem anyway
        logging.getLogger("picobot").warning("credentials check failed: %s", e)
        return None


def budget_problem(runtime: Runtime) -> str | None:
    """A tokenBudget too small for the system prompt and tool schemas (every turn would
    fail or drop every message): a config error naming the minimum."""
    from picobot_tui.core.budget import minimum_budget

    budget = runtime.settings.agents.defaults.token_budget
    fixed = runtime.loop.fixed_cost()
    minimum = minimum_budget(fixed)
    if budget >= minimum:
        return None
    return (
        f"agents.defaults.tokenBudget is {budget:,}, but the system prompt and tool schemas "
        f"alone take ~{fixed:,} tokens: the minimum is {minimum:,} (a few thousand more "
        "leaves room to work)."
    )


def open_session(runtime: Runtime, raw: str | None, model: str, *, lazy: bool = False) -> Session:
    """The session to work on: a new one (with `lazy`, its file waits for the first
    message) or the one `raw` names."""
    store = runtime.store
    try:
        if raw is None:
            return store.open(store.new_key("cli"), model=model, create=True, lazy=lazy)
        try:
            key = store.resolve(raw)
        except SessionNotFound:
            raise
        except SessionError as e:  # a malformed id: a usage error, like an unknown one
            raise RunError(str(e), EXIT_USAGE) from None
        return store.open(key, model=model, create=False)
    except SessionNotFound as e:
        raise RunError(str(e), EXIT_USAGE) from None  # its message already says where to look
    except SessionError as e:  # in use by another process, or the disk refused
        raise RunError(str(e), EXIT_ERROR) from None


@contextmanager
def open_run(
    opts: RunOptions, *, confirm: ConfirmFn | None = None, lazy: bool = False
) -> Iterator[Run]:
    """Load everything a run needs; closes (unlocks) the session afterwards. `lazy`: a new
    session is only written once a message arrives (an idle --json leaves none)."""
    settings, warnings = load_checked_settings(opts)
    model = opts.model or settings.agents.defaults.model
    runtime = build_runtime(settings, model=model, confirm=confirm)
    setup_logging(settings.log_path, runtime.scrub, to_stderr=opts.logs)
    problem = budget_problem(runtime) or credentials_problem(settings, model)
    if problem:
        raise RunError(problem, EXIT_USAGE)
    session = open_session(runtime, opts.session, model, lazy=lazy)
    try:
        yield Run(settings, runtime, session, warnings)
    finally:
        session.close()

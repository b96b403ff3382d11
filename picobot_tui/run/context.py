"""What every `picobot agent` run does first: settings, logging, credentials, runtime and the
session to work on. Problems come out as `RunError` with a user-facing message and an exit
code, never as a traceback."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from picobot_tui.config.settings import ConfigError, Settings, load_settings
from picobot_tui.core.approval import ConfirmFn
from picobot_tui.core.llm.demo import is_demo
from picobot_tui.core.sessions import Session, SessionError, SessionNotFound
from picobot_tui.run.exit_codes import EXIT_ERROR, EXIT_USAGE
from picobot_tui.run.logs import setup_logging
from picobot_tui.run.options import RunError, RunOptions
from picobot_tui.run.runtime import Runtime, build_runtime, set_plan
from picobot_tui.run.workspace import check_workspace

__all__ = ["Run", "RunError", "RunOptions", "load_checked_settings", "open_run", "open_session"]


@dataclass
class Run:
    settings: Settings
    runtime: Runtime
    session: Session
    warnings: list[str]
    notes: list[str] = field(default_factory=list)  # e.g. where `latest` was found


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
    check_workspace(settings)
    return settings, warnings


def credentials_problem(settings: Settings, model: str, *, how: str = "--model") -> str | None:
    if is_demo(model):
        return None
    from picobot_tui.core.llm.client import check_credentials

    return check_credentials(settings, model, how=how)


def model_explicit(settings: Settings, model: str | None) -> bool:
    """The user chose the model: `--model`, or agents.defaults.model in the config file or
    the environment (PICOBOT_AGENTS__DEFAULTS__MODEL), not the built-in default."""
    return model is not None or "model" in settings.agents.defaults.model_fields_set


def start_model(settings: Settings, model: str | None) -> tuple[str, str | None]:
    """The model the TUI starts on, and the banner to show when it is the offline demo
    because no key is there for the default model and the user chose none (else None).
    Headless runs never fall back: a script silently getting demo answers would be wrong."""
    name = model or settings.agents.defaults.model
    if model_explicit(settings, model) or credentials_problem(settings, name) is None:
        return name, None
    from picobot_tui.core.llm.client import provider_for
    from picobot_tui.core.llm.demo import DEMO_MODEL
    from picobot_tui.core.shapes.providers import PROVIDER_ENV

    provider = provider_for(name) or "<provider>"
    env = PROVIDER_ENV.get(provider, "the provider's API key variable")
    return DEMO_MODEL, (
        f"demo model, offline — `{name}` has no API key: set {env} (or "
        f"providers.{provider}.apiKey) to use it."
    )


def model_problem(settings: Settings, model: str, *, how: str = "--model") -> str | None:
    """`unknown model …` when LiteLLM cannot route `model` (core/llm/model_names.py); may
    import LiteLLM."""
    from picobot_tui.core.llm.model_names import unknown_model

    return unknown_model(settings, model, how=how)


def credentials_hint(settings: Settings, model: str, *, how: str = "--model") -> str | None:
    """What to do when `model` has no usable key (None when fine). Offline, no LiteLLM."""
    try:
        return credentials_problem(settings, model, how=how)
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


def open_session(
    runtime: Runtime,
    raw: str | None,
    model: str,
    *,
    lazy: bool = False,
    source: str = "headless",
    notes: list[str] | None = None,
) -> Session:
    """The session to work on: a new one (with `lazy`, its file waits for the first
    message; `source` names the front end in its header) or the one `raw` names. A note
    for the user (`latest` came from another workspace) is appended to `notes`."""
    store = runtime.store
    try:
        if raw is None:
            key = store.new_key("cli")
            return store.open(key, model=model, create=True, lazy=lazy, source=source)
        try:
            key, note = store.resolve_with_note(raw)
            if note is not None and notes is not None:
                notes.append(note)
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
    opts: RunOptions,
    *,
    confirm: ConfirmFn | None = None,
    lazy: bool = False,
    source: str = "headless",
) -> Iterator[Run]:
    """Load everything a run needs; closes (unlocks) the session afterwards. `lazy`: a new
    session is only written once a message arrives (an idle --json leaves none); `source`:
    the front end a new session records (`-m` headless, `--json` json)."""
    settings, warnings = load_checked_settings(opts)
    with (
        _state_home(settings, opts.ephemeral),
        _opened(opts, settings, warnings, confirm=confirm, lazy=lazy, source=source) as run,
    ):
        yield run


@contextmanager
def _state_home(settings: Settings, ephemeral: bool) -> Iterator[None]:
    """An `--ephemeral` run writes into a private folder (0700, under $TMPDIR) removed at
    its end, so nothing under the picobot home changes; the config is read as usual."""
    if not ephemeral:
        yield
        return
    scratch = Path(tempfile.mkdtemp(prefix="picobot-ephemeral-"))
    settings.use_state_home(scratch)
    try:
        yield
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _opened(
    opts: RunOptions,
    settings: Settings,
    warnings: list[str],
    *,
    confirm: ConfirmFn | None,
    lazy: bool,
    source: str,
) -> Iterator[Run]:
    model = opts.model or settings.agents.defaults.model
    runtime = build_runtime(settings, model=model, confirm=confirm)
    set_plan(runtime, opts.plan)
    if runtime.tools.ctx.saved.problem:
        warnings.append(runtime.tools.ctx.saved.problem)
    setup_logging(settings.log_path, runtime.scrub, to_stderr=opts.logs)
    problem = (
        budget_problem(runtime)
        or model_problem(settings, model)
        or credentials_problem(settings, model)
    )
    if problem:
        # The warnings go with it: a mistyped key (`modle`) is often why there is a problem.
        raise RunError("\n".join([problem, *(f"warning: {w}" for w in warnings)]), EXIT_USAGE)
    notes: list[str] = []
    session = open_session(runtime, opts.session, model, lazy=lazy, source=source, notes=notes)
    try:
        yield Run(settings, runtime, session, warnings, notes)
    finally:
        session.close()

"""The TUI's entry from the CLI: resolve the session, run the app, hand back its exit code."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from picobot_tui.run.exit_codes import EXIT_OK, EXIT_USAGE
from picobot_tui.run.options import RunError, RunOptions

if TYPE_CHECKING:
    from picobot_tui.tui.app import PicobotApp
    from picobot_tui.tui.loading import WrapModel


def run_app(options: RunOptions, *, wrap_model: WrapModel | None = None) -> int:
    """Run the TUI until the user quits; returns the exit code. Problems found while
    starting (a bad config, an unknown session) are raised as RunError. `wrap_model`
    wraps the app's own model client (the CLI passes the warm-server relay)."""
    if options.session is not None:
        # Resolved before the screen opens: an unknown id is a usage error, not a flash.
        from picobot_tui.core.paths import sessions_dir
        from picobot_tui.core.sessions import SessionError
        from picobot_tui.run.session_stores import session_store

        try:
            store = session_store(sessions_dir())
            if options.session.strip().lower() == "latest":
                store.latest()  # checked here; the app picks this workspace's own latest
            else:
                options = replace(options, session=store.resolve(options.session))
        except SessionError as e:
            raise RunError(f"{e}", EXIT_USAGE) from None
    from picobot_tui.tui.app import PicobotApp

    app = PicobotApp(options=options, wrap_model=wrap_model)
    hint = None
    try:
        result = app.run()
        hint = resume_hint(app)
    finally:
        app.sessions_close()
    if app.start_error is not None:
        raise app.start_error
    if hint:
        print(hint, flush=True)  # the terminal is back to normal: this stays on screen
    return result if isinstance(result, int) else EXIT_OK


def resume_hint(app: PicobotApp) -> str | None:
    """How to come back to the session the app had open (None when it holds no message)."""
    switcher = getattr(app, "sessions", None)  # made once the settings are loaded
    session = switcher.session if switcher is not None else None
    if session is None or not session.info.message_count:
        return None
    from picobot_tui.tui.session_switcher import short_key

    hint = f"Resume this session with: picobot agent --session {short_key(session.key)}"
    if not session.info.answered:  # a failed first turn: the message is kept, unlisted
        hint += " (no answer yet: `picobot sessions list --all` lists it)"
    return hint

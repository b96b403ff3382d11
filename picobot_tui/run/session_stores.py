"""The one way a front end opens the session store: with the deletion of a session's
checkpoints wired in, so `sessions delete`, `sessions prune`, the TUI's browser and ACP all
take a session's snapshots with it (the core's sessions import nothing of checkpoints)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from picobot_tui.core.sessions import SessionStore


def session_store(
    sessions_dir: Path,
    *,
    scrub: Callable[[str], str] | None = None,
    workspace: Path | None = None,
) -> SessionStore:
    """A SessionStore over `sessions_dir` whose `delete` also deletes that session's
    checkpoints (under `<home>/data/checkpoints`, the home being the folder's parent);
    `workspace` (resolved) is recorded in new sessions and is where `latest` looks first."""

    def delete_checkpoints(key: str) -> None:
        # Imported here: `sessions list` and `--help` never load the checkpoint code.
        from picobot_tui.core.checkpoints.cleanup import delete_with_session

        delete_with_session(sessions_dir, key)

    return SessionStore(
        sessions_dir, scrub=scrub, on_delete=delete_checkpoints, workspace=workspace
    )

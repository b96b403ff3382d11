"""What a listing shows: index entries as SessionInfo, which sessions are listed, `latest`.

A session is listed (and can be `latest`) once the model answered in it: a run that failed
before any answer keeps the user's message in its file, reachable by id, by `sessions list
--all` and by search, but it is not a conversation to come back to (issue 25, point 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picobot_tui.core.sessions.files import SessionInfo, SessionNotFound

Entry = dict[str, Any]


def to_info(key: str, e: Entry) -> SessionInfo:
    """The SessionInfo an index entry stands for."""
    return SessionInfo(
        key=key,
        title=e.get("title") or e.get("auto_title") or "",
        created=e.get("created") or "",
        updated=e.get("updated") or e.get("created") or "",
        message_count=int(e.get("message_count") or 0),
        model=e.get("model"),
        source=e.get("source"),
        parent=e.get("parent"),
        forked_at=e.get("forked_at"),
        workspace=e.get("workspace"),
        answered=bool(e.get("answered", True)),
    )


def listed(e: Entry) -> bool:
    """Whether a session shows in `list` and can be `latest`: it holds an answer."""
    return bool(e.get("answered", True)) and bool(e.get("message_count"))


def short_key(key: str) -> str:
    """A key as the user types it: the default "cli:" channel left off."""
    return key.removeprefix("cli:")


def pick_latest(
    ranked: Sequence[tuple[str, Entry]], workspace: str | None
) -> tuple[str, str | None]:
    """(key, note) of the newest listed session in `ranked` (newest first): the newest in
    `workspace` when it has one, else the newest anywhere with a note naming where it is
    from. SessionNotFound when no session has an answer."""
    shown = [(k, e) for k, e in ranked if listed(e)]
    if workspace is not None:
        for key, entry in shown:
            if entry.get("workspace") == workspace:
                return key, None
    if shown:
        key, entry = shown[0]
        if workspace is None:
            return key, None
        where = entry.get("workspace") or "a workspace picobot did not record"
        return key, (
            f"no session in this workspace ({workspace}) yet: 'latest' is "
            f"{short_key(key)}, from {where}"
        )
    hidden = sum(1 for _, e in ranked if e.get("message_count"))
    more = (
        f" ({hidden} without an answer: `picobot sessions list --all` shows them)" if hidden else ""
    )
    raise SessionNotFound(
        "there are no sessions with an answer yet, so there is no 'latest' to "
        f"resume{more}; start one with `picobot agent`"
    )

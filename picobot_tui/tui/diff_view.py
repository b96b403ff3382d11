"""`/diff` in the TUI, the timeline's `+a −b`, and one call's diff from the timeline.

The changes come from the checkpoints' timeline (core/checkpoints: file tools and exec's
shadow snapshots alike). `/diff` shows the current turn (`t`) or the whole session (`s`)
file by file (widgets/diff_review.py); `r` there puts one file back to its state before
those changes, through `plan_restore(paths=...)`, asking first when the file was changed
after the agent's change. Every checkpoint call blocks: each runs in a thread.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from picobot_tui.core.checkpoints.diff import FileDiff, file_diffs
from picobot_tui.core.checkpoints.restore import RestorePlan, RestoreResult
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore, checkpoints_root
from picobot_tui.core.checkpoints.timeline import Timeline, load_timeline
from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.branch import user_turns
from picobot_tui.core.visible import visible
from picobot_tui.tui.checkpoint_host import CheckpointHost
from picobot_tui.tui.rewind import ask, stores
from picobot_tui.widgets.diff_review import DiffReviewScreen, FileItem

CHANGING_TOOLS = ("write_file", "edit_file", "exec")
"""Tools whose calls may change files (the timeline shows their `+a −b`)."""

Scope = Literal["turn", "session"]


def items(diffs: list[FileDiff]) -> list[FileItem]:
    """What the review screen shows of each diff (escapes made visible)."""
    return [
        FileItem(
            str(d.path), visible(d.shown), d.added, d.removed, visible(d.text), d.undoable, d.binary
        )
        for d in diffs
    ]


def _current_turn(sessions: SessionStore, key: str) -> int:
    return len(user_turns(sessions.load_messages(key)))


def scoped(
    sessions: SessionStore, store: CheckpointStore, key: str, scope: Scope
) -> tuple[str, list[FileItem], int]:
    """(title, files, the turn a revert goes back to) for this turn or the session. Blocking."""
    timeline = load_timeline(store, key)
    if scope == "session":
        first = min((c.turn for c in timeline.changes), default=1)
        return "Changes of this session", items(file_diffs(store, timeline)), first
    turn = _current_turn(sessions, key)
    return f"Changes of turn {turn}", items(file_diffs(store, timeline, turn)), turn


def _key(app: CheckpointHost) -> str | None:
    session = app.sessions.session
    if session is None:
        app.notify("No changes yet: send a message first")
        return None
    return str(session.key)


class _State:
    """What the open review screen shows: its scope and the turn a revert goes back to."""

    scope: Scope = "turn"
    turn: int = 1
    call: str | None = None
    screen: DiffReviewScreen | None = None


_state = _State()


async def open_diff(app: CheckpointHost, scope: Scope) -> None:
    both, key = stores(app), _key(app)
    if both is None or key is None:
        return
    sessions, store = both
    try:
        title, files, turn = await asyncio.to_thread(scoped, sessions, store, key, scope)
    except (OSError, CheckpointError) as e:
        app.notify(f"Cannot read the changes: {e}", severity="error")
        return
    _state.scope, _state.turn, _state.call = scope, turn, None
    _state.screen = DiffReviewScreen(title, files)
    app.push_screen(_state.screen)


async def rescope(app: CheckpointHost, scope: str) -> None:
    screen, key, both = _state.screen, _key(app), stores(app)
    if screen is None or key is None or both is None:
        return
    sessions, store = both
    _state.scope = "session" if scope == "session" else "turn"
    title, files, _state.turn = await asyncio.to_thread(scoped, sessions, store, key, _state.scope)
    await screen.show(title, files)


def _call_timeline(timeline: Timeline, call_id: str) -> Timeline:
    """The changes of one call (of its latest turn: a scripted id may repeat)."""
    own = [c for c in timeline.changes if c.call == call_id]
    last = max((c.turn for c in own), default=0)
    return Timeline(timeline.key, [c for c in own if c.turn == last])


def call_diffs(store: CheckpointStore, key: str, call_id: str) -> tuple[list[FileItem], int]:
    """One call's diffs and its turn. Blocking."""
    sub = _call_timeline(load_timeline(store, key), call_id)
    turn = sub.changes[0].turn if sub.changes else 1
    return items(file_diffs(store, sub)), turn


def call_stats(
    store: CheckpointStore, key: str, calls: set[str]
) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """(added, removed) of each call that changed a file, and the calls that could not be
    checkpointed (exec without git, over maxFiles). Blocking."""
    timeline = load_timeline(store, key)
    out = {}
    skipped = {u.call for u in timeline.uncheckpointed if u.call in calls}
    for call in calls:
        sub = _call_timeline(timeline, call)
        if sub.changes:
            diffs = file_diffs(store, sub)
            if diffs:
                out[call] = (sum(d.added for d in diffs), sum(d.removed for d in diffs))
    return out, skipped


async def show_call_changes(app: CheckpointHost, calls: set[str]) -> None:
    """Look up what each finished call changed and show it on the timeline."""
    runtime, session = app.runtime, app.sessions.session
    if runtime is None or session is None or not calls:
        return
    if not runtime.settings.checkpoints.enabled:
        return
    store = CheckpointStore(checkpoints_root(runtime.settings.state_home))
    try:
        stats, skipped = await asyncio.to_thread(call_stats, store, session.key, calls)
    except (OSError, CheckpointError):
        return  # informative only
    for call, (added, removed) in stats.items():
        app.router.show_call_changes(call, added, removed)
    for call in skipped:
        app.router.show_call_changes(call, None, None)


async def open_call_diff(app: CheckpointHost, call_id: str) -> None:
    both, key = stores(app), _key(app)
    if both is None or key is None:
        return
    files, turn = await asyncio.to_thread(call_diffs, both[1], key, call_id)
    _state.scope, _state.turn, _state.call = "turn", turn, call_id
    _state.screen = DiffReviewScreen(f"Changes of call {visible(call_id)}", files, scoped=False)
    app.push_screen(_state.screen)


def _restore(
    sessions: SessionStore,
    store: CheckpointStore,
    key: str,
    plan: RestorePlan,
    overwrite: set[Path],
) -> RestoreResult:
    """Apply the plan and record the restore as a change of the session's last turn (as a
    rewind does), so the diff no longer shows the file and a later rewind expects it."""
    from picobot_tui.core.checkpoints.restore import apply_restore
    from picobot_tui.core.checkpoints.rewind import record_restore

    done = apply_restore(store, plan, overwrite)
    record_restore(store, key, _current_turn(sessions, key), done)
    return done


async def revert_file(app: CheckpointHost, message: Any) -> None:
    """Put one file back to its state before the changes shown (asking on a conflict)."""
    from picobot_tui.core.checkpoints.restore import plan_restore
    from picobot_tui.widgets.rewind_dialog import ConflictScreen

    both, key, screen = stores(app), _key(app), _state.screen
    if both is None or key is None:
        return
    sessions, store = both
    path = Path(message.key)
    timeline = await asyncio.to_thread(load_timeline, store, key)
    plan = await asyncio.to_thread(plan_restore, store, timeline, _state.turn, {path})
    overwrite: set[Path] = set()
    blocked = [f.blocked for f in plan.to_restore if f.blocked]
    if blocked:  # a folder on the way is a link now: never written through, nothing to ask
        app.notify(f"Could not revert {message.shown}: {blocked[0]}", severity="error", timeout=10)
        return
    if plan.conflicts:
        answer = await ask(app, ConflictScreen([message.shown], "revert"))
        if answer != "overwrite":
            app.notify(f"{message.shown} kept as it is")
            return
        overwrite = {path}
    if not plan.to_restore:
        app.notify(f"{message.shown} is already as it was")
        return
    done = await asyncio.to_thread(_restore, sessions, store, key, plan, overwrite)
    if done.failed:
        item, why = done.failed[0]
        app.notify(f"Could not revert {item.shown}: {why}", severity="error", timeout=10)
    elif done.restored:
        app.notify(f"Reverted {message.shown}")
    if screen is not None and screen.is_attached:
        if _state.call is not None:
            files, _ = await asyncio.to_thread(call_diffs, store, key, _state.call)
            await screen.show(screen.title_text, files)
        else:
            title, files, _ = await asyncio.to_thread(scoped, sessions, store, key, _state.scope)
            await screen.show(title, files)

"""`/rewind` in the TUI: pick a user message, then restore code and/or conversation.

The list (widgets/rewind_dialog.py) shows each user message with what its turn changed
(`turn_stats`). Then:

- **code and conversation**: the files go back to just before that message, and the app
  moves to a branch (a new session with `parent`/`forked_at`; the original stays complete and
  in the browser), the message back in the prompt for editing;
- **conversation only**: the branch, files untouched;
- **code only**: the files go back; the session goes on, with a note stored for the model.

Before files changed after the agent's change are overwritten, they are listed and the user
answers (overwrite, keep them, cancel). Every checkpoint call blocks: each runs in a thread.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from picobot_tui.core.checkpoints.restore import RestorePlan, RestoreResult
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore, checkpoints_root
from picobot_tui.core.checkpoints.timeline import skipped_line
from picobot_tui.core.content import content_text
from picobot_tui.core.sessions import SessionError, SessionStore
from picobot_tui.tui.checkpoint_host import CheckpointHost
from picobot_tui.tui.view_events import NoticeShown
from picobot_tui.widgets.rewind_dialog import ConflictScreen, Mode, RewindScreen, TurnItem

log = logging.getLogger("picobot")


def stores(
    app: CheckpointHost, *, quiet: bool = False
) -> tuple[SessionStore, CheckpointStore] | None:
    """The session store and the checkpoint store of the app's runtime; None (and the user
    is told, unless `quiet`) while starting or with `checkpoints.enabled: false`."""
    runtime = app.runtime
    if runtime is None or not app.ready:
        why = "Still starting: try again in a moment"
    elif not runtime.settings.checkpoints.enabled:
        why = "Checkpoints are off (checkpoints.enabled: false): nothing to rewind or diff"
    else:
        return runtime.store, CheckpointStore(checkpoints_root(runtime.settings.state_home))
    if not quiet:
        app.notify(why)
    return None


def turn_items(sessions: SessionStore, store: CheckpointStore, key: str) -> list[TurnItem]:
    """The session's user messages with what each turn changed. Blocking."""
    from picobot_tui.core.checkpoints.diff import turn_stats
    from picobot_tui.core.checkpoints.timeline import load_timeline

    messages = sessions.load_messages(key)
    skipped: set[int] = set()
    try:
        timeline = load_timeline(store, key)
        stats = turn_stats(store, timeline)
        skipped = {u.turn for u in timeline.uncheckpointed}
    except (OSError, CheckpointError) as e:
        log.warning("rewind: no checkpoints of %s: %s", key, e)
        stats = {}
    items = []
    users = [m for m in messages if m.get("role") == "user"]
    for turn, message in enumerate(users, start=1):
        changed = str(stats.get(turn) or "")
        if turn in skipped:  # an exec that could not be snapshotted: not all is undoable
            changed = (changed + "; " if changed else "") + "some commands not checkpointed"
        items.append(TurnItem(turn, content_text(message.get("content")), changed))
    return items


async def ask(app: CheckpointHost, screen: Any) -> Any:
    """Push `screen` and wait for its answer."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def done(result: Any) -> None:
        if not future.done():
            future.set_result(result)

    app.push_screen(screen, done)
    return await future


async def open_rewind(app: CheckpointHost) -> None:
    """The rewind list for the open session, then the chosen restore."""
    if app.lifecycle.running:
        app.notify("The agent is working: press Esc to interrupt it first.")
        return
    both = stores(app)
    if both is None:
        return
    sessions, store = both
    session = app.sessions.session
    if session is None:
        app.notify("Nothing to rewind yet: send a message first")
        return
    key = session.key
    items = await asyncio.to_thread(turn_items, sessions, store, key)
    if not items:
        app.notify("Nothing to rewind yet: send a message first")
        return
    # The worker waits for the dialogs; the caller (a key or a command) returns at once.
    app.run_worker(_rewind(app, sessions, store, key, items), group="rewind", exclusive=True)


async def _rewind(
    app: CheckpointHost,
    sessions: SessionStore,
    store: CheckpointStore,
    key: str,
    items: list[TurnItem],
) -> None:
    chosen = await ask(app, RewindScreen(items))
    if chosen is None:
        return
    turn, mode = chosen
    code = mode in ("both", "code")
    overwrite: set[Path] = set()
    plan: RestorePlan | None = None
    if code:
        from picobot_tui.core.checkpoints.rewind import plan_rewind

        try:
            plan = await asyncio.to_thread(plan_rewind, sessions, store, key, turn)
        except (SessionError, CheckpointError, OSError) as e:
            app.notify(f"Cannot rewind: {e}", severity="error", timeout=10)
            return
        if plan.conflicts:
            answer = await ask(app, ConflictScreen([f.described for f in plan.conflicts], "rewind"))
            if answer is None:
                app.notify("Rewind cancelled: nothing was restored")
                return
            if answer == "overwrite":
                overwrite = {f.path for f in plan.conflicts}
    await _apply(app, sessions, store, key, turn, mode, overwrite, plan)


async def _apply(
    app: CheckpointHost,
    sessions: SessionStore,
    store: CheckpointStore,
    key: str,
    turn: int,
    mode: Mode,
    overwrite: set[Path],
    plan: RestorePlan | None,
) -> None:
    from picobot_tui.core.checkpoints.rewind import rewind

    code, conversation = mode in ("both", "code"), mode in ("both", "conversation")
    if not conversation:
        app.sessions.close()  # code only: the core appends its note to the session itself
    try:
        result = await asyncio.to_thread(
            rewind,
            sessions,
            store,
            key,
            turn,
            code=code,
            conversation=conversation,
            overwrite=overwrite,
        )
    except (SessionError, CheckpointError, OSError) as e:
        if not conversation:
            await app.sessions.resume(key)
        app.notify(f"Rewind failed: {e}", severity="error", timeout=10)
        return
    if result.branch is not None:
        await app.sessions.resume(result.branch)
        app.prompt.text = result.prompt
        app.prompt.input.focus()
    else:
        await app.sessions.resume(key)
    lines = [_summary(turn, mode, key, result.branch, bool(plan and plan.uncheckpointed))]
    if result.restored is not None:
        lines += _restored_lines(result.restored, plan)
    await app.router.apply(NoticeShown("info", "\n".join(lines)))


def _summary(turn: int, mode: Mode, key: str, branch: str | None, partial: bool = False) -> str:
    short = key.removeprefix("cli:")
    if mode == "code":
        # Not "Files restored" when some changes were never checkpointed (listed below).
        what = "Checkpointed files" if partial else "Files"
        return (
            f"{what} restored to before turn {turn}; the conversation goes on (the model is told)."
        )
    what = "Code and conversation" if mode == "both" else "Conversation"
    # What the branch holds, so the transcript above and the gauge can be checked against it.
    holds = (
        "no messages yet"
        if turn <= 1
        else ("turn 1" if turn == 2 else f"turns 1–{turn - 1}") + " of the original"
    )
    return (
        f"{what} rewound to before turn {turn}: this is a branch of {short} "
        f"({(branch or '').removeprefix('cli:')}), holding {holds}; the original is kept in "
        "/sessions."
    )


def _restored_lines(done: RestoreResult, plan: RestorePlan | None) -> list[str]:
    lines = []
    if done.restored:
        lines.append(f"Restored {len(done.restored)} file(s): " + _names(done.restored))
    elif not done.failed:
        checked = " checkpointed" if plan is not None and plan.uncheckpointed else ""
        lines.append(f"No{checked} file needed restoring.")
    if done.kept:
        lines.append("Kept your later edits of: " + _names(done.kept))
    for item, why in done.failed:
        lines.append(f"Could not restore {item.shown}: {why}")
    if plan is not None:
        for item in plan.not_undoable:
            lines.append(f"Not undoable (not kept): {item.shown}: {item.target.reason}")
        for skipped in plan.uncheckpointed:
            line = skipped_line(skipped, "what it changed is not restored")
            lines.append(line[0].upper() + line[1:])
    return lines


def _names(items: list[Any], limit: int = 8) -> str:
    names = [i.shown for i in items[:limit]]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(names) + more

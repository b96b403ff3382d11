"""Rewind and branch a session: the conversation (branches) and the code (restore.py).

`rewind(sessions, store, key, turn, code=True, conversation=True, overwrite=...)`:

- `conversation`: a branch at `turn` (core/sessions/branch.py) with a copy of the original's
  checkpoint records of the turns before it (and a `lineage` record), so a rewind in the
  branch reaches them, even once the original is deleted; the original stays complete;
- `code`: every file changed in `turn` or later goes back to its state before `turn`.
  Files changed since the agent's change are conflicts: `plan` lists them and they are kept
  unless named in `overwrite`; with `code` only, a system message is stored in the session
  so the model knows its files went back.

Plan first with `plan_rewind` (no change anywhere), then `rewind` with the user's answer
about the conflicts. `branch_session` is the branch alone (`picobot sessions branch`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picobot_tui.core.checkpoints.records import Change, parse_records
from picobot_tui.core.checkpoints.restore import (
    RestorePlan,
    RestoreResult,
    apply_restore,
    current_state,
    plan_restore,
)
from picobot_tui.core.checkpoints.store import CheckpointStore
from picobot_tui.core.checkpoints.timeline import load_timeline
from picobot_tui.core.sessions.branch import branch, check_turn, user_turns
from picobot_tui.core.sessions.store import SessionStore

CODE_ONLY_NOTE = (
    "The user restored the workspace files to their state before turn {turn} (their message "
    "{quoted}). Changes made since then by tools were undone{kept}; read files again before "
    "relying on what you saw of them."
)


@dataclass
class RewindResult:
    plan: RestorePlan
    restored: RestoreResult | None = None
    branch: str | None = None
    prompt: str = ""
    notes: list[str] = field(default_factory=list)


def plan_rewind(sessions: SessionStore, store: CheckpointStore, key: str, turn: int) -> RestorePlan:
    """What restoring the code to before `turn` would do (SessionError: no such turn)."""
    check_turn(sessions.load_messages(key), turn)
    return plan_restore(store, load_timeline(store, key), turn)


def branch_session(
    sessions: SessionStore, store: CheckpointStore, key: str, turn: int
) -> tuple[str, str]:
    """A branch at `turn` with its checkpoints' lineage; (new key, the prompt to edit)."""
    new_key, prompt = branch(sessions, key, turn)
    store.append(new_key, {"type": "lineage", "parent": key, "forked_at": turn})
    # Its own copy of the turns it took: it rewinds into them even once the parent is gone
    # (the blobs are shared; a sweep keeps what any session names).
    for record in store.records(key):
        if record.get("type") in ("change", "uncheckpointed") and _turn(record) < turn:
            store.append(new_key, record)
    return new_key, prompt


def _turn(record: dict[str, Any]) -> int:
    try:
        return int(record.get("turn") or 0)
    except (TypeError, ValueError):
        return 0


def rewind(
    sessions: SessionStore,
    store: CheckpointStore,
    key: str,
    turn: int,
    *,
    code: bool = True,
    conversation: bool = True,
    overwrite: frozenset[Path] | set[Path] = frozenset(),
) -> RewindResult:
    """Rewind `key` to just before `turn` (see the module docstring). Blocking."""
    messages = sessions.load_messages(key)
    start = check_turn(messages, turn)
    plan = plan_restore(store, load_timeline(store, key), turn)
    result = RewindResult(plan)
    if conversation:
        if code:
            result.restored = _restore(store, key, messages, plan, overwrite)
        result.branch, result.prompt = branch_session(sessions, store, key, turn)
        return result
    if not code:
        return result
    # Code only: the session is taken first (it may be open elsewhere), then the note.
    with sessions.open(key, create=False) as session:
        result.restored = _restore(store, key, messages, plan, overwrite)
        kept = result.restored.kept
        text = str(messages[start].get("content") or "")
        quoted = repr(text if len(text) <= 80 else text[:79] + "…")
        but = ", ".join(f.shown for f in kept)
        failed = ", ".join(f.shown for f, _ in result.restored.failed)
        note = CODE_ONLY_NOTE.format(
            turn=turn,
            quoted=quoted,
            kept=(f" except {but} (changed by the user since)" if kept else "")
            + (f"; {failed} could not be restored" if failed else ""),
        )
        if plan.uncheckpointed:
            # The model must not think those are back either.
            lost = sorted({p for u in plan.uncheckpointed for p in u.paths})
            where = f" in {', '.join(lost)}" if lost else ""
            note += f" What commands changed{where} was not checkpointed and was not undone."
        session.append({"role": "system", "content": note})
    result.notes.append(note)
    return result


def _restore(
    store: CheckpointStore,
    key: str,
    messages: list[dict[str, Any]],
    plan: RestorePlan,
    overwrite: frozenset[Path] | set[Path],
) -> RestoreResult:
    done = apply_restore(store, plan, overwrite)
    record_restore(store, key, len(user_turns(messages)), done)
    return done


def record_restore(store: CheckpointStore, key: str, turn: int, done: RestoreResult) -> None:
    """The restore is a change of the session too (tool "rewind", in its last turn): a
    later rewind then expects the restored files, not what the agent had left."""
    if not done.restored:
        return
    changes, _, _ = parse_records(store.records(key))
    seq = max((c.seq for c in changes), default=0)
    for item in done.restored:
        seq += 1
        workspace = next((c.workspace for c in changes if c.path == item.path), item.path.parent)
        after = current_state(item, max(item.target.size, 1) * 2)
        change = Change(seq, turn, "rewind", "rewind", workspace, item.path, item.current, after)
        store.append(key, change.to_json())

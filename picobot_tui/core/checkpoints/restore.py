"""Putting files back: a plan first (what would change, what conflicts), then the restore.

`plan_restore(store, timeline, turn, paths=None)` works out, for every file changed in turn
`turn` or later (only `paths` when given), the state it had just before that turn (the
`before` of its first change since) and the state the agent left it in (the `after` of its
last change). Each `FileRestore` says whether the file now is what the agent left
(`conflict` False) or was changed since by someone else (`conflict` True: the user's edit,
another program); whether it can be restored at all (`undoable`: a change over
`checkpoints.maxFileBytes` cannot); and whether anything needs doing (`needed`).

`apply_restore(store, plan, overwrite=frozenset())` restores every needed, undoable file
that is not a conflict, and the conflicts named in `overwrite` (the user said yes). It never
overwrites a conflict silently. Exact: bytes and permission bits, files the agent created are
removed, files it deleted are recreated (their folders too), links are links again. Each file
is replaced atomically (a temp file renamed over it, `core/atomic_write.py`), so a crash
(SIGKILL) mid-restore leaves every file in its old or its new state, never torn.
Links on the way: every read and write goes through confined.py, which never follows a link
in a folder of the path. Where a folder has become a link (or a file) since, the plan says
why: when that link is the agent's own (in the plan, going back to "absent", unchanged
since) it is removed first and the folder made again; else the file is `blocked` ("a/ is a
link now; not restored"), a conflict that is never overwritten, `overwrite` or not. The
removals come first, then the files and links.
Exec changes: a file exec modified keeps its exact mode; one it deleted comes back with the
mode picobot last saw it with, else git's (0644 or 0755); a chmod by exec that leaves the
exec bit alone is not seen; `.gitignore`d files are never recorded, so never touched.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from picobot_tui.core.atomic_write import atomic_write_many
from picobot_tui.core.checkpoints import confined
from picobot_tui.core.checkpoints.records import ABSENT, FileState, Uncheckpointed
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore
from picobot_tui.core.checkpoints.timeline import Timeline

BATCH = 128
"""Files written per sync (each holds its folder's fd open until its rename)."""


@dataclass(frozen=True)
class FileRestore:
    path: Path
    shown: str
    target: FileState  # what it goes back to
    expected: FileState  # what the agent left
    current: FileState  # what is there now
    root: Path  # where the path is walked from (its workspace)
    blocked: str | None = None  # why it cannot be restored: a folder on the way is a link

    @property
    def undoable(self) -> bool:
        return self.target.restorable

    @property
    def conflict(self) -> bool:
        """Changed after the agent's last change (by the user or another program)."""
        if not self.needed:
            return False
        return self.blocked is not None or not self.current.same_content(self.expected)

    @property
    def needed(self) -> bool:
        return not self.current.same_content(self.target)

    @property
    def described(self) -> str:
        """The path, with why it is blocked when it is (what a conflict list shows)."""
        return f"{self.shown} ({self.blocked})" if self.blocked else self.shown


@dataclass
class RestorePlan:
    turn: int
    files: list[FileRestore] = field(default_factory=list)
    uncheckpointed: list[Uncheckpointed] = field(default_factory=list)

    @property
    def conflicts(self) -> list[FileRestore]:
        return [f for f in self.files if f.undoable and f.conflict]

    @property
    def not_undoable(self) -> list[FileRestore]:
        return [f for f in self.files if not f.undoable and f.needed]

    @property
    def to_restore(self) -> list[FileRestore]:
        return [f for f in self.files if f.undoable and f.needed]


@dataclass
class RestoreResult:
    restored: list[FileRestore] = field(default_factory=list)
    kept: list[FileRestore] = field(default_factory=list)  # conflicts not overwritten
    failed: list[tuple[FileRestore, str]] = field(default_factory=list)


def plan_restore(
    store: CheckpointStore, timeline: Timeline, turn: int, paths: set[Path] | None = None
) -> RestorePlan:
    """What restoring the files to their state before turn `turn` would do."""
    first: dict[Path, FileState] = {}
    last: dict[Path, FileState] = {}
    shown: dict[Path, str] = {}
    roots: dict[Path, Path] = {}
    for change in timeline.since(turn):
        if paths is not None and change.path not in paths:
            continue
        first.setdefault(change.path, change.before)
        last[change.path] = change.after
        shown.setdefault(change.path, change.shown)
        roots.setdefault(change.path, confined.root_of(change.workspace, change.path))
    plan = RestorePlan(turn, uncheckpointed=timeline.uncheckpointed_since(turn))
    items: dict[Path, FileRestore] = {}
    # Shallowest first: a folder's own entry is known before the files below it.
    for path in sorted(first, key=lambda p: len(p.parts)):
        target, expected, root = first[path], last[path], roots[path]
        # The current bytes are kept too: the restore is recorded, and can be undone.
        limit = max(target.size, expected.size, 1 << 20) * 2
        blocked = None
        try:
            current = confined.read(root, path, limit, store)
        except confined.Blocked as e:
            current = ABSENT  # nothing of the workspace is there (git sees it so too)
            if not _goes_first(items.get(e.folder)):
                blocked = e.strerror
        if current.reason == confined.FOLDER and expected.kind == "absent":
            current = ABSENT  # a folder the agent made: its files are entries of the plan
        items[path] = FileRestore(path, shown[path], target, expected, current, root, blocked)
    plan.files = [items[p] for p in first]
    return plan


def _goes_first(way: FileRestore | None) -> bool:
    """Whether the link (or file) in the way is the agent's own, removed before the files
    below it are written: an entry going back to "absent" that nobody changed since."""
    return (
        way is not None
        and way.blocked is None
        and way.target.kind == "absent"
        and way.current.same_content(way.expected)
    )


def apply_restore(
    store: CheckpointStore, plan: RestorePlan, overwrite: frozenset[Path] | set[Path] = frozenset()
) -> RestoreResult:
    """Restore the plan's files (conflicts only when in `overwrite`; a blocked file never).
    Blocking.

    Removals first (a link the agent left where a folder was goes before that folder's
    files come back), with the folders made for them; then the regular files in batches
    (`atomic_write_many`: one sync per batch, each file replaced by a rename); then links."""
    result = RestoreResult()
    chosen: list[FileRestore] = []
    for item in plan.to_restore:
        if item.blocked is not None:
            result.failed.append((item, item.blocked))
        elif item.conflict and item.path not in overwrite:
            result.kept.append(item)
        else:
            chosen.append(item)
    removals = [i for i in chosen if i.target.kind == "absent"]
    for item in removals:
        _attempt(result, item, partial(confined.remove, item.root, item.path))
    # The folders made for removed files go too, deepest first, those left empty only.
    folders = {(i.root, Path(d)) for i in result.restored for d in (i.target.dirs or ())}
    for root, folder in sorted(folders, key=lambda f: len(f[1].parts), reverse=True):
        confined.remove_folder(root, folder)
    files = [i for i in chosen if i.target.kind == "file"]
    for start in range(0, len(files), BATCH):
        _write_files(store, files[start : start + BATCH], result)
    for item in chosen:
        if item.target.kind == "link":
            _attempt(result, item, partial(_put_link, store, item))
    return result


def _attempt(result: RestoreResult, item: FileRestore, action: Callable[[], None]) -> None:
    try:
        action()
    except (OSError, CheckpointError) as e:
        result.failed.append((item, _why(e)))
    else:
        result.restored.append(item)


def _why(e: Exception) -> str:
    return getattr(e, "strerror", None) or str(e)


def _data(store: CheckpointStore, item: FileRestore) -> bytes:
    if item.target.sha is None:
        raise CheckpointError(f"{item.path} was not kept ({item.target.reason or 'not undoable'})")
    return store.get(item.target.sha)


def _mode(target: FileState) -> int:
    return target.mode if target.mode is not None else 0o644


def _write_files(
    store: CheckpointStore, items: Iterable[FileRestore], result: RestoreResult
) -> None:
    """One batch of regular files, each written in its folder reached without a link."""
    with contextlib.ExitStack() as folders:
        fds: dict[Path, int] = {}
        batch: list[tuple[int, str, bytes, int]] = []
        ready: list[FileRestore] = []
        for item in items:
            try:
                data = _data(store, item)
                fd = fds.get(item.path.parent)
                if fd is None:
                    opened = folders.enter_context(
                        confined.folder_of(item.root, item.path, create=True)
                    )
                    assert opened is not None  # create: made when missing
                    fd = fds[item.path.parent] = opened
            except (OSError, CheckpointError) as e:
                result.failed.append((item, _why(e)))
                continue
            batch.append((fd, item.path.name, data, _mode(item.target)))
            ready.append(item)
        for item, error in zip(ready, atomic_write_many(batch), strict=True):
            if error is None:
                result.restored.append(item)
            else:
                result.failed.append((item, _why(error)))


def _put_link(store: CheckpointStore, item: FileRestore) -> None:
    confined.put_link(item.root, item.path, os.fsdecode(_data(store, item)))


def current_state(item: FileRestore, max_bytes: int) -> FileState:
    """What `item.path` holds now, read as the plan reads it (unknown when blocked)."""
    try:
        state = confined.read(item.root, item.path, max_bytes, None)
    except confined.Blocked as e:
        return FileState("unknown", reason=e.strerror)
    return ABSENT if state.reason == confined.FOLDER else state  # as git sees a folder

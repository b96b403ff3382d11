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
Exec changes: a file exec modified keeps its exact mode; one it deleted comes back with the
mode picobot last saw it with, else git's (0644 or 0755); a chmod by exec that leaves the
exec bit alone is not seen; `.gitignore`d files are never recorded, so never touched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from picobot_tui.core.atomic_write import atomic_write, atomic_write_many
from picobot_tui.core.checkpoints.records import FileState, Uncheckpointed, read_state
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore
from picobot_tui.core.checkpoints.timeline import Timeline


@dataclass(frozen=True)
class FileRestore:
    path: Path
    shown: str
    target: FileState  # what it goes back to
    expected: FileState  # what the agent left
    current: FileState  # what is there now

    @property
    def undoable(self) -> bool:
        return self.target.restorable

    @property
    def conflict(self) -> bool:
        """Changed after the agent's last change (by the user or another program)."""
        return self.needed and not self.current.same_content(self.expected)

    @property
    def needed(self) -> bool:
        return not self.current.same_content(self.target)


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
    for change in timeline.since(turn):
        if paths is not None and change.path not in paths:
            continue
        first.setdefault(change.path, change.before)
        last[change.path] = change.after
        shown.setdefault(change.path, change.shown)
    plan = RestorePlan(turn, uncheckpointed=timeline.uncheckpointed_since(turn))
    for path, target in first.items():
        # The current bytes are kept too: the restore is recorded, and can be undone.
        limit = max(target.size, last[path].size, 1 << 20) * 2
        current = read_state(path, limit, store)
        plan.files.append(FileRestore(path, shown[path], target, last[path], current))
    return plan


def apply_restore(
    store: CheckpointStore, plan: RestorePlan, overwrite: frozenset[Path] | set[Path] = frozenset()
) -> RestoreResult:
    """Restore the plan's files (conflicts only when in `overwrite`). Blocking.

    Regular files are written in one batch (`atomic_write_many`: one sync for all, each file
    replaced by a rename), then links, then the removals and the folders made for them."""
    result = RestoreResult()
    chosen: list[FileRestore] = []
    for item in plan.to_restore:
        if item.conflict and item.path not in overwrite:
            result.kept.append(item)
        else:
            chosen.append(item)
    files: list[tuple[FileRestore, bytes]] = []
    others: list[FileRestore] = []
    for item in chosen:
        if item.target.kind != "file":
            others.append(item)
            continue
        try:
            data = _prepare(store, item.path, item.target)
        except (OSError, CheckpointError) as e:
            result.failed.append((item, getattr(e, "strerror", None) or str(e)))
        else:
            files.append((item, data))
    batch = [(i.path, data, _mode(i.target)) for i, data in files]
    for (item, _), error in zip(files, atomic_write_many(batch), strict=True):
        if error is None:
            result.restored.append(item)
        else:
            result.failed.append((item, error.strerror or str(error)))
    for item in others:
        try:
            restore_file(store, item.path, item.target)
        except (OSError, CheckpointError) as e:
            result.failed.append((item, getattr(e, "strerror", None) or str(e)))
        else:
            result.restored.append(item)
    # The folders made for removed files go too, deepest first, those left empty only.
    folders = {d for item in result.restored for d in (item.target.dirs or ())}
    for folder in sorted(folders, key=lambda d: d.count(os.sep), reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    return result


def _mode(target: FileState) -> int:
    return target.mode if target.mode is not None else 0o644


def _prepare(store: CheckpointStore, path: Path, target: FileState) -> bytes:
    """The bytes of a regular file to put back, its folder made, a link in its place gone."""
    if target.sha is None:
        raise CheckpointError(f"{path} was not kept ({target.reason or 'not undoable'})")
    data = store.get(target.sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()  # the file goes back where the link was, not where it points
    return data


def restore_file(store: CheckpointStore, path: Path, target: FileState) -> None:
    """Put `path` in state `target`, atomically."""
    if target.kind == "absent":
        with contextlib.suppress(FileNotFoundError):
            if path.is_dir() and not path.is_symlink():
                raise IsADirectoryError(21, "a folder is there now", str(path))
            path.unlink()
        return
    if target.kind == "unknown" or target.sha is None:
        raise CheckpointError(f"{path} was not kept ({target.reason or 'not undoable'})")
    data = store.get(target.sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    if target.kind == "link":
        tmp = tempfile.mktemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.symlink(os.fsdecode(data), tmp)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return
    if path.is_symlink():
        path.unlink()  # the file goes back where the link was, not where it points
    atomic_write(path, data, target.mode if target.mode is not None else 0o644, keep_mode=False)

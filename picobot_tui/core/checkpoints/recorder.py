"""The recorder: what the tool step calls around a file change or an exec.

One `Recorder` per picobot home (`recorder_for(settings)`), shared by every session of the
process. Its methods block (call them in a thread):

- `capture(paths)` before a file tool runs: each file's prior state, its bytes kept;
- `commit(key, turn, call, tool, workspace, before, after)`: appends a record per file whose
  state changed (none when the call changed nothing);
- `snapshot(workspace, budget)` before and after an exec (shadow_git.py); `exec_changes(...)`
  records the files the command changed, the prior and new bytes copied out of the shadow
  repository into the blob store, so restore and diff read one store; a file over
  `maxFileBytes` the snapshots left out is recorded from its stat data, "not undoable"
  (unless it was small before); it returns the nested repositories that changed too
  (`changed_repositories`), which the caller records as not checkpointed;
- `not_checkpointed(key, turn, call, tool, reason)` records a call that could not be
  snapshotted, and `tell(reason)` says whether the user still has to be told (once per
  reason per process, never silently).

Storage stays under `checkpoints.maxBytes`: limits.py prunes the oldest sessions when the
blobs written since the last check could have crossed it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from picobot_tui.core.checkpoints.cleanup import hold, ref_name
from picobot_tui.core.checkpoints.left_out import BigFile, changed_repositories, under
from picobot_tui.core.checkpoints.records import (
    ABSENT,
    Change,
    FileState,
    parse_records,
    read_state,
    state_of_bytes,
)
from picobot_tui.core.checkpoints.shadow_git import (
    GIT_TIMEOUT,
    NotCheckpointed,
    ShadowGit,
    Snapshot,
    TreeChange,
    pin,
)
from picobot_tui.core.checkpoints.store import CheckpointStore, checkpoints_root

if TYPE_CHECKING:
    from picobot_tui.core.settings import CheckpointsConfig, CoreSettings

log = logging.getLogger("picobot.checkpoints")

_LINK = 0o120000
_EXEC = 0o100755
_GITLINK = 0o160000


class Recorder:
    def __init__(self, root: Path, config: CheckpointsConfig) -> None:
        self.store = CheckpointStore(root)
        self.config = config
        self._seq: dict[str, int] = {}
        self._modes: dict[Path, tuple[str, int]] = {}  # path -> (sha, exact mode) last seen
        self._told: set[str] = set()
        self._shadows: dict[Path, ShadowGit] = {}
        self._holds: list[int] = []  # use locks of the shadow repositories (cleanup.hold)
        self._written = 0
        self._checked = False
        self._enforcing = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------ file tools

    def capture(self, paths: list[Path]) -> dict[Path, FileState]:
        """Each file's state now, its bytes kept (within checkpoints.maxFileBytes)."""
        out = {p: read_state(p, self.config.max_file_bytes, self.store) for p in paths}
        self._check_limits()
        return out

    def commit(
        self,
        key: str,
        turn: int,
        call: str,
        tool: str,
        workspace: Path,
        before: dict[Path, FileState],
        after: dict[Path, FileState],
        ok: bool = True,
    ) -> list[Change]:
        """Record every file whose state changed between `before` and `after` (`ok`: the
        tool succeeded, so a file too big to compare did change)."""
        changes = []
        for path, old in before.items():
            new = after.get(path, ABSENT)
            if old.same_content(new):
                continue
            same = old.sha is not None and old.sha == new.sha
            if old.kind == new.kind == "unknown" and (same or not ok):
                continue  # not read (too big): changed only when the tool says it wrote
            changes.append(self._record(key, turn, call, tool, workspace, path, old, new))
        return changes

    def _record(
        self,
        key: str,
        turn: int,
        call: str,
        tool: str,
        workspace: Path,
        path: Path,
        before: FileState,
        after: FileState,
    ) -> Change:
        with self._lock:
            seq = self._next_seq(key)
            change = Change(seq, turn, call, tool, workspace, path, before, after)
            self.store.append(key, change.to_json())
            if after.kind == "file" and after.sha and after.mode is not None:
                self._modes[path] = (after.sha, after.mode)
        return change

    def _next_seq(self, key: str) -> int:
        seq = self._seq.get(key)
        if seq is None:
            changes, _, _ = parse_records(self.store.records(key))
            seq = max((c.seq for c in changes), default=0)
        self._seq[key] = seq + 1
        return seq + 1

    # ------------------------------------------------------------ exec

    def shadow(self, workspace: Path) -> ShadowGit:
        shadow = self._shadows.get(workspace)
        if shadow is None:
            shadow = ShadowGit(self.store.git, workspace, self.config.max_files)
            self.store._dir(self.store.git)
            # In use for as long as this process lives: never pruned under it (cleanup.py).
            self._holds.append(hold(shadow.dir))
            self._shadows[workspace] = shadow
        return shadow

    def snapshot(
        self, workspace: Path, key: str | None = None, budget: float = GIT_TIMEOUT
    ) -> Snapshot:
        """The workspace now, its tree kept for session `key` (a ref) until that session is
        deleted; NotCheckpointed says why there is none."""
        self.store._dir(self.store.root)
        shadow = self.shadow(workspace)
        for _ in range(3):
            snap = shadow.snapshot(self.config.max_file_bytes, budget)
            if key is None or pin(shadow, ref_name(key), snap.tree):
                return snap
        raise NotCheckpointed("the snapshot was collected as it was taken")

    def exec_changes(
        self,
        key: str,
        turn: int,
        call: str,
        tool: str,
        workspace: Path,
        old: Snapshot,
        new: Snapshot,
    ) -> tuple[list[Change], list[str]]:
        """Record each file that differs between the snapshots `old` and `new`; returns the
        changes and the nested repositories that changed (relative paths, not recorded)."""
        shadow = self.shadow(workspace)
        nested = changed_repositories(old.nested, new.nested)
        roots = {*old.nested, *new.nested}
        # Paths inside a nested repository are the uncheckpointed record's (a `git init` or
        # `rm -rf x/.git` turns its files into a gitlink or back: they did not change).
        diffs = [
            d
            for d in shadow.changes(old.tree, new.tree)
            if _GITLINK not in (d.old_mode, d.new_mode) and not under(d.path, roots)
        ]
        diffs += self._big_diffs(shadow, old, new, {d.path for d in diffs})
        if not diffs:
            return [], nested
        limit = self.config.max_file_bytes
        contents = shadow.blobs([i for d in diffs for i in (d.old_id, d.new_id)])
        changes = []
        old_folders: set[str] | None = None
        for d in diffs:
            path = workspace / d.path
            if d.path in old.big:
                before = _big_state(old.big[d.path], limit)
            else:
                before = self._git_state(d.old_mode, d.old_id, contents, limit)
            if before.kind == "absent" and "/" in d.path:
                if old_folders is None:
                    old_folders = shadow.folders(old.tree)
                before = _absent_in(workspace, d.path, old_folders)
            if d.path in new.big:
                after = _big_state(new.big[d.path], limit)
            else:
                after = self._git_state(d.new_mode, d.new_id, contents, limit)
            if after.kind == "file" and after.mode is not None:
                # git keeps only the exec bit; the file as it is now has its exact mode.
                now = read_state(path, limit)
                if now.kind == "file" and now.sha == after.sha:
                    after = now
                    if (
                        before.kind == "file"
                        and (before.mode or 0) & 0o111 == (now.mode or 0) & 0o111
                    ):
                        before = FileState("file", before.sha, now.mode, before.size)
            elif before.kind == "file" and before.sha:
                # Deleted or replaced: the exact mode picobot last saw these bytes with.
                seen = self._modes.get(path)
                if seen is not None and seen[0] == before.sha:
                    before = FileState("file", before.sha, seen[1], before.size)
            changes.append(self._record(key, turn, call, tool, workspace, path, before, after))
        return changes, nested

    def _big_diffs(
        self, shadow: ShadowGit, old: Snapshot, new: Snapshot, seen: set[str]
    ) -> list[TreeChange]:
        """Files over maxFileBytes in either snapshot whose stat data changed and that the
        tree diff does not show (git kept a stale small version, or nothing)."""
        paths = sorted(
            p
            for p in {*old.big, *new.big}
            if p not in seen and old.big.get(p) != new.big.get(p) and not under(p, set(new.nested))
        )
        if not paths:
            return []
        before, after = shadow.entries(old.tree, paths), shadow.entries(new.tree, paths)
        none = (0, "0" * 40)
        return [TreeChange(p, *before.get(p, none), *after.get(p, none)) for p in paths]

    def _git_state(self, mode: int, blob: str, contents: dict[str, bytes], limit: int) -> FileState:
        if mode == 0:
            return ABSENT
        data = contents.get(blob)
        if data is None:
            return FileState("unknown", reason="not in the shadow repository")
        if mode == _LINK:
            state = state_of_bytes(data, 0o777, limit, self.store, "link")
        else:
            state = state_of_bytes(data, 0o755 if mode == _EXEC else 0o644, limit, self.store)
        self._check_limits()
        return state

    def not_checkpointed(
        self, key: str, turn: int, call: str, tool: str, reason: str, paths: Sequence[str] = ()
    ) -> None:
        """Record a call that was not checkpointed (only `paths` of it, when given)."""
        record: dict[str, Any] = {"type": "uncheckpointed", "turn": turn, "call": call}
        record["tool"] = tool
        if paths:
            record["paths"] = list(paths)
        self.store.append(key, {**record, "reason": reason})

    def tell(self, reason: str) -> bool:
        """True the first time `reason` comes up in this process: the user is told once."""
        with self._lock:
            if reason in self._told:
                return False
            self._told.add(reason)
            return True

    # ------------------------------------------------------------ limits

    def _check_limits(self) -> None:
        """Enforce maxBytes once per process, then whenever the blobs written since could
        have crossed it (a twentieth of it)."""
        due = self.store.written - self._written > self.config.max_bytes // 20
        if (self._checked and not due) or self._enforcing:
            return
        self._checked = True
        self._written = self.store.written
        self._enforcing = True
        # Off the tool's path: walking the folder can take a while with a big shadow repo.
        threading.Thread(target=self._enforce, name="checkpoint-limits", daemon=True).start()

    def _enforce(self) -> None:
        from picobot_tui.core.checkpoints.limits import enforce

        try:
            enforce(self.store, self.config.max_bytes, keep=set(self._seq))
        except OSError as e:
            log.warning("checkpoints: could not enforce maxBytes: %s", e)
        finally:
            self._enforcing = False


_recorders: dict[Path, Recorder] = {}


def recorder_for(settings: CoreSettings) -> Recorder | None:
    """The process's recorder for the settings' home, None when checkpoints are off."""
    config = settings.checkpoints
    if not config.enabled:
        return None
    root = checkpoints_root(settings.state_home)
    recorder = _recorders.get(root)
    if recorder is None:
        recorder = _recorders[root] = Recorder(root, config)
    recorder.config = config
    return recorder


__all__ = ["NotCheckpointed", "Recorder", "recorder_for"]


def _big_state(big: BigFile, limit: int) -> FileState:
    """A file left out of a snapshot for its size: not kept, so not undoable."""
    reason = f"{big.size:,} bytes, over checkpoints.maxFileBytes ({limit:,})"
    return FileState("unknown", mode=big.mode, size=big.size, reason=reason)


def _absent_in(workspace: Path, rel: str, folders: set[str]) -> FileState:
    """A file new in the tree: the folders above it the old tree did not have (git keeps
    no empty folder, so one that was empty before counts as new)."""
    missing = []
    parent = Path(rel).parent
    while str(parent) != "." and str(parent) not in folders:
        missing.append(str(workspace / parent))
        parent = parent.parent
    return FileState("absent", dirs=tuple(missing)) if missing else ABSENT

"""The storage cap: `checkpoints.maxBytes` over blobs, records and shadow repositories.

`usage(store)` is what the checkpoints folder holds, in bytes. `enforce(store, max_bytes,
keep)` deletes the checkpoints of the oldest sessions first (by their record file's last
change), never those in use: in `keep` (the sessions this process is recording) or open in
any picobot process (cleanup.py), until the total fits; when only those are left, shadow
repositories no process uses are dropped (they are caches: the next exec snapshot rebuilds
one). A repository a live process snapshots into is never dropped: its next snapshot and
diff need it. Returns the sessions pruned.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from picobot_tui.core.checkpoints.cleanup import remove_repo, repos, session_in_use
from picobot_tui.core.checkpoints.store import CheckpointStore


def _size(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def usage(store: CheckpointStore) -> int:
    return _size(store.root)


def enforce(store: CheckpointStore, max_bytes: int, keep: set[str] | None = None) -> list[str]:
    keep = keep or set()
    total = usage(store)
    if total <= max_bytes:
        return []
    pruned: list[str] = []
    ages = []
    for key in store.session_keys():
        with contextlib.suppress(OSError):
            ages.append((store.record_path(key).stat().st_mtime, key))
    for _, key in sorted(ages):
        if total <= max_bytes:
            break
        if key in keep or session_in_use(store, key):
            continue
        with contextlib.suppress(OSError):
            store.record_path(key).unlink()
        pruned.append(key)
        store.sweep()
        total = usage(store)
    for repo in repos(store):
        if total <= max_bytes:
            break
        if remove_repo(repo):
            total = usage(store)
    return pruned

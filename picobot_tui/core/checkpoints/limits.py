"""The storage cap: `checkpoints.maxBytes` over blobs, records and shadow repositories.

`usage(store)` is what the checkpoints folder holds, in bytes. `enforce(store, max_bytes,
keep)` deletes the checkpoints of the oldest sessions first (by their record file's last
change), never those in `keep` (the sessions this process is recording), until the total
fits; when only kept sessions are left, shadow repositories not in use are dropped (they
are caches: the next exec snapshot rebuilds one). Returns the sessions pruned.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

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
        if key in keep:
            continue
        with contextlib.suppress(OSError):
            store.record_path(key).unlink()
        pruned.append(key)
        store.sweep()
        total = usage(store)
    if total > max_bytes and store.git.is_dir():
        for repo in sorted(store.git.iterdir()):
            if total <= max_bytes:
                break
            if _idle(repo):
                store.remove_tree(repo)
                total = usage(store)
    return pruned


def _idle(repo: Path) -> bool:
    """Whether no snapshot is running in `repo` (its flock is free)."""
    try:
        fd = os.open(repo / "picobot.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True

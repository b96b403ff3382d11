"""What is in use, and what a deleted session leaves behind.

In use (never pruned by `checkpoints.maxBytes`, never collected from under a live session):

- a session open in a picobot process: its session file's flock is held (`sessions`);
- a shadow repository a process snapshots into: the recorder holds a shared flock on
  `git/<workspace id>.use` for as long as it lives (`hold`); a repository is removed only
  under that lock taken exclusively (`unused`).

`delete_with_session(sessions_dir, key)` is what the session store `run.session_stores`
opens calls on a deletion; `after_delete(store, key)` runs when a session's checkpoints are deleted: its refs leave
every shadow repository; a repository no session names any more and no process uses is
removed whole; one still in use or named by others is garbage-collected, so the content
only the deleted session's snapshots held is gone either way.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from picobot_tui.core.checkpoints.shadow_git import (
    NotCheckpointed,
    collect,
    git_exe,
    open_repo,
    sessions_in,
)
from picobot_tui.core.checkpoints.store import (
    CheckpointError,
    CheckpointStore,
    checkpoints_root,
)
from picobot_tui.core.private_files import open_private
from picobot_tui.core.sessions.files import SessionError, key_to_filename, lock_path
from picobot_tui.core.sessions.handle import OPEN_SESSIONS

log = logging.getLogger("picobot.checkpoints")


def ref_name(key: str) -> str:
    """A session key as a ref component (a key's `:` is not allowed in one)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]


# ------------------------------------------------------------ sessions in use


def sessions_dir(store: CheckpointStore) -> Path:
    """`<home>/sessions` of the store at `<home>/data/checkpoints`."""
    return store.root.parent.parent / "sessions"


def session_in_use(store: CheckpointStore, key: str) -> bool:
    """Whether a picobot process (this one or another) has the session open."""
    try:
        path = sessions_dir(store) / key_to_filename(key)
    except SessionError:
        return False
    if str(path) in OPEN_SESSIONS:
        return True
    return _held(lock_path(path))


def _held(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


# ------------------------------------------------------------ repositories in use


def use_lock(repo: Path) -> Path:
    return repo.with_name(repo.name + ".use")


def hold(repo: Path) -> int:
    """Mark `repo` in use by this process until the returned fd is closed (a shared
    flock; blocks while a pruner removes the repository)."""
    lock = use_lock(repo)
    while True:
        fd = open_private(lock, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # removed with its repository while we waited: take the new one


@contextlib.contextmanager
def unused(repo: Path) -> Iterator[bool]:
    """Whether no process holds `repo`; while True, none can start to."""
    try:
        fd = open_private(use_lock(repo), os.O_RDWR | os.O_CREAT)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)


def remove_repo(repo: Path) -> bool:
    """Remove `repo` (and its lock file) when no process uses it."""
    with unused(repo) as free:
        if free:
            shutil.rmtree(repo, ignore_errors=True)
            with contextlib.suppress(OSError):
                use_lock(repo).unlink()
        return free


def repos(store: CheckpointStore) -> list[Path]:
    try:
        return sorted(p for p in store.git.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


# ------------------------------------------------------------ after a deletion


def after_delete(store: CheckpointStore, key: str) -> None:
    """Take session `key`'s snapshots out of every shadow repository (see the module)."""
    if git_exe() is None:
        for repo in repos(store):
            remove_repo(repo)  # nothing can read or clean it: an unused one goes whole
        return
    name = ref_name(key)
    for repo in repos(store):
        try:
            shadow = open_repo(repo)
            named = sessions_in(shadow)
            if not named - {name} and remove_repo(repo):
                continue
            if name in named or not named:
                collect(shadow, name)
        except (NotCheckpointed, OSError) as e:
            log.warning("could not clean the snapshots of %s in %s: %s", key, repo, e)


def delete_with_session(sessions_dir: Path, key: str) -> None:
    """Delete the checkpoints of a deleted session (the store `run.session_stores` opens
    calls this): those under `<home>/data/checkpoints`, the home being the sessions folder's
    parent; its records, the blobs only it named, its snapshots (`after_delete`)."""
    root = checkpoints_root(Path(sessions_dir).parent)
    if not root.is_dir():
        return
    store = CheckpointStore(root)
    try:
        store.delete_session(key)
        after_delete(store, key)
    except (OSError, CheckpointError) as e:
        log.warning("could not delete the checkpoints of %s: %s", key, e)

"""A restore's file I/O below a root, never through a link on the way.

A command the agent ran may have replaced a folder with a link (`a -> /elsewhere`); a
restore that then wrote `a/key` by its path would write `/elsewhere/key`. Here every path is
walked from its root (the workspace; `/` for a file outside it) one folder at a time with
`os.open(name, O_DIRECTORY | O_NOFOLLOW, dir_fd=...)`, and the read, write, removal or
`rmdir` happens relative to the last folder's fd: a link or a non-folder on the way raises
`Blocked` (naming it) and nothing is done through it. The root itself is trusted (opened
as named). A final link is acted on itself, never followed.

Not guarded (as in core/tools/paths.py): a process that moves a folder while this runs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from picobot_tui.core.atomic_write import link_temp
from picobot_tui.core.checkpoints.records import FileState, absent, read_state
from picobot_tui.core.checkpoints.store import CheckpointStore
from picobot_tui.core.visible import label

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Blocked(OSError):
    """A folder on the way to a file is a link or not a folder now."""

    def __init__(self, folder: Path, shown: str, what: str) -> None:
        super().__init__(errno.ENOTDIR, f"{shown}/ is {what} now; not restored", str(folder))
        self.folder = folder


def root_of(workspace: Path, path: Path) -> Path:
    """Where `path` is walked from: its workspace when inside it, else `/`."""
    if path != workspace and path.is_relative_to(workspace):
        return workspace
    return Path(path.anchor or "/")


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).parts
    if not parts or any(p in (".", "..") for p in parts):
        raise OSError(errno.EINVAL, "not a file below its root", str(path))
    return parts


@contextlib.contextmanager
def folder_of(root: Path, path: Path, *, create: bool = False) -> Iterator[int | None]:
    """An fd of `path`'s folder, reached from `root` without following a link. None when a
    folder on the way does not exist, unless `create` (then it is made, as `mkdir -p`)."""
    parts = _parts(root, path)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            yield None
            return
        root.mkdir(parents=True, exist_ok=True)  # the workspace itself: trusted
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts[:-1]):
            try:
                nxt = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                with contextlib.suppress(FileExistsError):  # made meanwhile: open decides
                    os.mkdir(name, dir_fd=fd)
                nxt = _open_dir(fd, name, root, parts[: i + 1])
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise _blocked(fd, name, root, parts[: i + 1]) from None
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _open_dir(fd: int, name: str, root: Path, parts: tuple[str, ...]) -> int:
    try:
        return os.open(name, _DIR, dir_fd=fd)
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise _blocked(fd, name, root, parts) from None


def _blocked(fd: int, name: str, root: Path, parts: tuple[str, ...]) -> Blocked:
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    folder = root.joinpath(*parts)
    return Blocked(folder, label("/".join(parts), exact=True), "a link" if is_link else "a file")


def remove(root: Path, path: Path) -> None:
    """Remove the file or link `path` (nothing to do when it is not there)."""
    with folder_of(root, path) as fd:
        if fd is None:
            return
        try:
            st = os.stat(path.name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder is there now", str(path))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=fd)


def remove_folder(root: Path, folder: Path) -> None:
    """`rmdir` `folder` when it is an empty folder (a link there is left alone)."""
    with contextlib.suppress(OSError), folder_of(root, folder) as fd:
        if fd is not None:
            os.rmdir(folder.name, dir_fd=fd)  # on a link: ENOTDIR, never followed


def put_link(root: Path, path: Path, target: str) -> None:
    """Make `path` the link `target`, atomically (a temp link renamed over it)."""
    with folder_of(root, path, create=True) as fd:
        assert fd is not None
        link_temp(fd, path.name, target)


FOLDER = "a folder is there now"
"""The `reason` of the state `read` gives a folder (git, so exec's records, has no folders)."""


def read(root: Path, path: Path, max_bytes: int, store: CheckpointStore | None) -> FileState:
    """The state of `path` now (records.read_state), read without following a link on the
    way (Blocked when a folder on the way is one)."""
    with folder_of(root, path) as fd:
        if fd is None:
            return absent(path)
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.stat(path.name, dir_fd=fd, follow_symlinks=False).st_mode):
                return FileState("unknown", reason=FOLDER)
        return read_state(path, max_bytes, store, dir_fd=fd)

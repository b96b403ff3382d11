"""Replace a file whole: a crash or a full disk leaves the old file or the new one, never half."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path


def _read_umask() -> int:
    # os.umask can only be read by setting it; do that once, at import, not in worker threads.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def atomic_write(
    path: Path, data: bytes, mode: int | None = None, *, keep_mode: bool = True
) -> None:
    """Write `data` to a temp file in `path`'s directory, fsync it, rename it over `path`, and
    fsync the directory so the rename itself survives a power cut.

    Permissions: with `keep_mode` an existing file keeps its permission bits; a new file (or
    every file, without `keep_mode`) gets `mode`, or 0666 minus the umask when `mode` is None
    (what a plain `open(path, "w")` would give).
    """
    final = mode if mode is not None else 0o666 & ~_UMASK
    if keep_mode:
        with contextlib.suppress(FileNotFoundError):
            final = path.stat().st_mode & 0o7777
    # mkstemp makes the file 0600, so private data is never readable by others, even briefly.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if final != 0o600:
                os.fchmod(f.fileno(), final)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The data is already in place; a filesystem that cannot fsync a directory is no error.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(4)}.tmp"


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> str:
    """A new temp file next to `name` in folder `dir_fd`, holding `data` (not synced)."""
    while True:
        tmp = _temp_name(name)
        try:
            # 0600 first, so private data is never readable by others, even briefly.
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dir_fd
            )
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as f:
            if mode != 0o600:
                os.fchmod(f.fileno(), mode)
            f.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return tmp


def atomic_write_many(files: list[tuple[int, str, bytes, int]]) -> list[OSError | None]:
    """Replace several files, each `(folder fd, name, data, mode)`, each whole with `mode`
    as its permission bits: the guarantee of `atomic_write` per file (a crash leaves each
    one old or new, never half), with one sync for all of them instead of two fsyncs per
    file (a rewind of 100 files took 1.6 s). Everything is relative to the folder fds (the
    caller opened them without following links), and a link at `name` is replaced, not
    followed.

    Every temp file is written first, then `os.sync()` makes their data durable, then each
    is renamed over its file, then each folder is fsynced once. Returns one entry per file:
    None when it was replaced, else the OSError that kept it as it was.
    """
    errors: list[OSError | None] = [None] * len(files)
    temps: list[str | None] = [None] * len(files)
    for i, (dir_fd, name, data, mode) in enumerate(files):
        try:
            temps[i] = _write_temp(dir_fd, name, data, mode)
        except OSError as e:
            errors[i] = e
    os.sync()
    folders: set[int] = set()
    for i, (dir_fd, name, _data, _mode) in enumerate(files):
        tmp = temps[i]
        if tmp is None:
            continue
        try:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            folders.add(dir_fd)
        except OSError as e:
            errors[i] = e
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
    for dir_fd in folders:
        with contextlib.suppress(OSError):  # a filesystem that cannot fsync a folder
            os.fsync(dir_fd)
    return errors


def link_temp(dir_fd: int, name: str, target: str) -> None:
    """Make `name` in folder `dir_fd` the symbolic link `target`, atomically: a temp link
    renamed over it (a link or file there is replaced, never followed)."""
    while True:
        tmp = _temp_name(name)
        try:
            os.symlink(target, tmp, dir_fd=dir_fd)
        except FileExistsError:
            continue
        break
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)

"""What an exec snapshot leaves out of the shadow repository, and how it still sees a change.

- Files over `checkpoints.maxFileBytes` are never hashed (a 2 GB file would stall every
  exec): `big_files` picks them, by `lstat` only, from the paths git is about to hash (new
  or stat-dirty ones); the snapshot keeps their stat data (`BigFile`), so a change between
  two snapshots is seen and recorded "not undoable".
- A nested git repository (a folder with its own `.git`, file or folder) is a gitlink to
  git: none of its files is in the tree. `fingerprint` is a stat walk of its files (never
  its `.git`, which is not opened), so a command that changes or deletes it is reported
  "not checkpointed" instead of passing silently.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import NamedTuple


class BigFile(NamedTuple):
    """What a snapshot knows of a file it left out: its stat data, not its bytes."""

    size: int
    mode: int
    mtime_ns: int
    ctime_ns: int
    ino: int


def big_files(workspace: Path, paths: list[str], limit: int) -> dict[str, BigFile]:
    """Those of `paths` (relative, from `git ls-files -o -m`) that are regular files over
    `limit` bytes. Links are not followed; files that are gone are left out."""
    found = {}
    for rel in paths:
        if rel.endswith("/"):
            continue  # a nested repository git shows as a folder
        try:
            st = os.lstat(workspace / rel)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            found[rel] = BigFile(
                st.st_size, stat.S_IMODE(st.st_mode), st.st_mtime_ns, st.st_ctime_ns, st.st_ino
            )
    return found


def is_repository(folder: Path) -> bool:
    return os.path.lexists(folder / ".git")


def fingerprint(folder: Path, max_entries: int) -> str | None:
    """A digest of the stat data of every entry under `folder` but `.git` (names, sizes,
    modes, times), None when it holds more than `max_entries` (too many to tell)."""
    digest = hashlib.sha256()
    n = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted([*files, *dirs]):
            if name == ".git":
                continue
            n += 1
            if n > max_entries:
                return None
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            rel = os.fsencode(os.path.relpath(path, folder))
            stamp = f"{st.st_mode}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
            digest.update(rel + b"\0" + stamp.encode() + b"\n")
    return digest.hexdigest()


def changed_repositories(old: dict[str, str | None], new: dict[str, str | None]) -> list[str]:
    """The nested repositories (relative paths) that appeared, went, or may have changed
    between two snapshots (a fingerprint of None: too many files to tell)."""
    out = []
    for path in sorted({*old, *new}):
        if path not in old or path not in new or old[path] is None or old[path] != new[path]:
            out.append(path)
    return out


def under(path: str, roots: set[str]) -> bool:
    """Whether `path` is one of `roots` or inside one (relative paths)."""
    parts = path.split("/")
    return any("/".join(parts[:i]) in roots for i in range(1, len(parts) + 1))

"""Where checkpoints live: content-addressed blobs and one record file per session.

Layout under `~/.picobot/data/checkpoints/` (0700 folders, 0600 files):

    blobs/ab/cdef…            a file's bytes, named by their SHA-256 (a state kept twice
                              costs nothing); a torn blob fails its hash and is never used
    sessions/<key>.jsonl      the session's records, one JSON line each, appended
                              (records.py says what a line holds)
    git/<workspace id>/       the shadow git repository of one workspace (shadow_git.py);
                              a session's snapshots are its refs `refs/picobot/<session>/…`
    git/<workspace id>.use    flock: shared while a process uses the repository (cleanup.py)

`CheckpointStore(root)` is cheap to build and takes no lock: a record file has one writer
(the process holding the session's lock), lines are appended whole with O_APPEND, and a
reader skips a torn last line. Blobs are written to a temp file and renamed into place
without fsync (they sit on the hot path of every edit; a power cut can lose a checkpoint,
never corrupt one: a blob is checked against its name on every read).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.private_files import ensure_private_dir, open_private, write_all

FRESH = 60.0  # seconds a blob is safe from a sweep after it was kept or used (a tool call)

_KEY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,31}:[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SHA_RE = re.compile(r"[0-9a-f]{64}")


class CheckpointError(Exception):
    """A checkpoint that cannot be read or used; the message is shown as is."""


def checkpoints_root(home: Path) -> Path:
    """The checkpoints folder of a picobot home (`<home>/data/checkpoints`)."""
    return Path(home) / "data" / "checkpoints"


def record_name(key: str) -> str:
    """The record file name of a session key (`cli:abc` -> `cli_abc.jsonl`)."""
    if not _KEY_RE.fullmatch(key):
        raise CheckpointError(f"invalid session id {key!r}")
    return key.replace(":", "_", 1) + ".jsonl"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CheckpointStore:
    """Blobs and per-session records under `root`. Methods block: call them in a thread
    from async code."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.sessions = self.root / "sessions"
        self.git = self.root / "git"
        self._made: set[Path] = set()
        self.written = 0
        """Bytes of blobs this instance wrote (what the maxBytes check counts)."""

    # ------------------------------------------------------------ folders

    def _dir(self, path: Path) -> Path:
        if path not in self._made:
            ensure_private_dir(path)
            self._made.add(path)
        return path

    # ------------------------------------------------------------ blobs

    def blob_path(self, sha: str) -> Path:
        return self.blobs / sha[:2] / sha[2:]

    def put(self, data: bytes, sha: str | None = None) -> str:
        """Keep `data`; returns its SHA-256. Nothing is written when it is already kept."""
        sha = sha or sha256(data)
        path = self.blob_path(sha)
        try:
            os.utime(path)  # kept already: fresh again, so a sweep leaves it (see `sweep`)
            return sha
        except FileNotFoundError:
            pass
        folder = self._dir(self._dir(self.blobs) / sha[:2])
        tmp = folder / f".{sha[2:]}.{os.getpid()}.tmp"
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        self.written += len(data)
        return sha

    def get(self, sha: str) -> bytes:
        """The bytes named `sha`; CheckpointError when missing or damaged."""
        if not _SHA_RE.fullmatch(sha or ""):
            raise CheckpointError(f"bad checkpoint name {sha!r}")
        try:
            data = self.blob_path(sha).read_bytes()
        except OSError:
            raise CheckpointError(f"checkpoint {sha[:12]} is missing") from None
        if sha256(data) != sha:
            raise CheckpointError(f"checkpoint {sha[:12]} is damaged")
        return data

    def has(self, sha: str) -> bool:
        return self.blob_path(sha).is_file()

    # ------------------------------------------------------------ records

    def record_path(self, key: str) -> Path:
        return self.sessions / record_name(key)

    def append(self, key: str, record: dict[str, Any]) -> None:
        """Append one record line to the session's file."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        self._dir(self.root)
        self._dir(self.sessions)
        fd = open_private(self.record_path(key), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            write_all(fd, line)
        finally:
            os.close(fd)

    def records(self, key: str) -> list[dict[str, Any]]:
        """The session's records in order (none when it has no file); bad lines skipped."""
        try:
            data = self.record_path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise CheckpointError(f"cannot read the checkpoints of {key}: {e}") from e
        return list(_parse(data))

    def session_keys(self) -> list[str]:
        """Every session that has records."""
        try:
            names = os.listdir(self.sessions)
        except FileNotFoundError:
            return []
        return [n[: -len(".jsonl")].replace("_", ":", 1) for n in names if n.endswith(".jsonl")]

    def delete_session(self, key: str) -> bool:
        """Remove the session's records and every blob no other session uses. Whether it
        had any."""
        path = self.record_path(key)
        try:
            last = path.stat().st_mtime_ns
            mine = _named(self.records(key))
            path.unlink()
        except FileNotFoundError:
            return False
        self.sweep(mine, last)
        return True

    def sweep(self, mine: set[str] | None = None, last: int = 0) -> int:
        """Delete the blobs no record names; returns the bytes freed. A blob kept or used
        in the last FRESH seconds stays: its record may not be written yet (a capture
        happens before the tool runs, the record after). Unless it is one of `mine` (a
        deleted session's) untouched since `last` (that session's last record, in ns): then
        the freshness was that session's own, and no capture since wants it."""
        used: set[str] = set()
        for key in self.session_keys():
            used |= _named(self.records(key))
        freed = 0
        since = time.time() - FRESH
        for sha, path in self._blob_files():
            if sha not in used:
                with contextlib.suppress(OSError):
                    st = path.stat()
                    own = mine is not None and sha in mine and st.st_mtime_ns <= last
                    if st.st_mtime >= since and not own:
                        continue
                    path.unlink()
                    freed += st.st_size
        return freed

    def _blob_files(self) -> Iterator[tuple[str, Path]]:
        try:
            folders = list(os.scandir(self.blobs))
        except FileNotFoundError:
            return
        for folder in folders:
            if not folder.is_dir(follow_symlinks=False):
                continue
            with os.scandir(folder.path) as it:
                for entry in it:
                    if not entry.name.startswith("."):
                        yield folder.name + entry.name, Path(entry.path)

    def remove_tree(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)


def _named(records: list[dict[str, Any]]) -> set[str]:
    """The blobs records name."""
    out: set[str] = set()
    for rec in records:
        for side in ("before", "after"):
            state = rec.get(side)
            if isinstance(state, dict) and isinstance(state.get("sha"), str):
                out.add(state["sha"])
    return out


def _parse(data: bytes) -> Iterator[dict[str, Any]]:
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = json_input.loads(raw)
        except ValueError:
            continue  # a torn last line
        if isinstance(obj, dict):
            yield obj

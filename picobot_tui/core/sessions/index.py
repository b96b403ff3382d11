"""The listing index: `sessions/index.jsonl`, an append-only cache of each session's summary.

Each line is a partial entry `{"key": ..., <fields>}`; folding the file in order, later
fields win per key, and `{"key": ..., "deleted": true}` drops the key. Partial entries let a
rename in one process and appends in another never overwrite each other's fields.

Fields: created, model, source (the front end that started it), workspace (the resolved
folder it was started in; null or absent: unknown, an older picobot's), answered (whether
the model ever answered: `list` and `latest` skip a session without one), title (explicit
rename or null), auto_title (first user message), updated, message_count, size (of the session file
when the line was written: a line with a smaller size than the folded entry is stale and
ignored, whatever order lines land in).

Writers append one small line with O_APPEND under a shared flock on `index.lock`. Compaction
(fold, drop entries without a file, write a temp file, os.replace) takes that lock exclusively,
so no append can land in the file being replaced. Readers take no lock: they see the old or the
new file whole, and skip a half-written last line until it is complete. A compacted file starts
with `{"_type": "header", "bytes": N, "live": L}` so a writer can tell cheaply when the file has
grown past twice its live size.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeGuard

from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.private_files import open_private, write_all
from picobot_tui.core.sessions.files import dumps_line, filename_to_key, is_key, is_timestamp

log = logging.getLogger("picobot")

INDEX_NAME = "index.jsonl"
LOCK_NAME = "index.lock"
COMPACT_MIN_BYTES = 64 * 1024  # below this, appends never trigger a compaction
COMPACT_MIN_LINES = 32
# An entry without `answered` (an older picobot's index) is scanned once from its file, so
# a leftover from a failed run is recognised as one; the index is only a cache.
REQUIRED = ("created", "updated", "message_count", "answered")
_REQUIRED_SET = frozenset(REQUIRED)

Entry = dict[str, Any]

# What a line may hold. The index is only a cache, so a line with any field of the wrong
# type or out of range is ignored whole (the file behind it is scanned instead): one bad
# line used to crash every `sessions` command.
MAX_TEXT = 1024  # titles are cut to 200 characters, auto titles to 60
MAX_COUNT = 10**9
MAX_SIZE = 1 << 50  # 1 PiB: anything larger is junk, not a session file
MAX_PATH = 4096  # PATH_MAX on Linux: a workspace path longer than this is junk


def _int_in(v: Any, top: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= top


# Each known field's kind and bound: text (or null) up to a length, a timestamp, a count
# (or null) up to a value, a bool. Checked inline in one pass over the line's fields: with
# a validator call per field, checking was 28 µs a line, the largest part of listing 10,000
# sessions (bench #9a), and the workspace and answered fields made it larger.
_TEXT, _STAMP, _COUNT, _COUNT_OR_NULL, _BOOL = range(5)
_FIELDS: dict[str, tuple[int, int]] = {
    "created": (_STAMP, 0),
    "updated": (_STAMP, 0),
    "title": (_TEXT, MAX_TEXT),
    "auto_title": (_TEXT, MAX_TEXT),
    "model": (_TEXT, MAX_TEXT),
    "source": (_TEXT, MAX_TEXT),
    "parent": (_TEXT, MAX_TEXT),
    "workspace": (_TEXT, MAX_PATH),
    "answered": (_BOOL, 0),
    "forked_at": (_COUNT_OR_NULL, MAX_COUNT),
    "message_count": (_COUNT, MAX_COUNT),
    "size": (_COUNT, MAX_SIZE),
}


def valid_entry(obj: Any) -> Entry | None:
    """The partial entry an index line stands for, or None when it cannot be trusted.

    Unknown fields (a newer picobot's) are dropped; a known one of the wrong type, a
    malformed key or a `deleted` that is not `true` rejects the whole line.
    """
    if not isinstance(obj, dict) or not is_key(obj.get("key")):
        return None
    if "deleted" in obj:
        return {"key": obj["key"], "deleted": True} if obj["deleted"] is True else None
    entry: Entry = {"key": obj["key"]}
    fields = _FIELDS
    for name, v in obj.items():
        spec = fields.get(name)
        if spec is None:
            continue  # "key", or a field this picobot does not know
        kind, top = spec
        if kind == _TEXT:
            if v is not None and (type(v) is not str or len(v) > top):
                return None
        elif kind == _STAMP:
            if not is_timestamp(v):
                return None
        elif kind == _BOOL:
            if type(v) is not bool:
                return None
        elif (v is not None or kind == _COUNT) and (type(v) is not int or not 0 <= v <= top):
            return None  # JSON gives exact ints; a bool is not a count
        entry[name] = v
    return entry


def merge_entry(entries: dict[str, Entry], obj: Entry) -> None:
    """Fold one line into `entries`. An entry describing a smaller session file than the one
    already folded is older news (say, a scan by `list()` in another process that landed after
    the owner's own updates) and is ignored, so the order lines land in does not matter."""
    key = obj["key"]
    if obj.get("deleted"):
        entries.pop(key, None)
        return
    cur = entries.get(key)
    if cur is None:
        entries[key] = dict(obj)
        return
    new, old = obj.get("size"), cur.get("size")
    if isinstance(new, int) and isinstance(old, int) and new < old:
        return
    cur.update(obj)


def is_complete(entry: Entry | None) -> TypeGuard[Entry]:
    """An entry holding every field a listing needs (so the file need not be read)."""
    # A set comparison runs in C: a generator over the fields cost ~5 % of a listing.
    return entry is not None and entry.keys() >= _REQUIRED_SET


class SessionIndex:
    def __init__(self, sessions_dir: Path, encode: Callable[[dict[str, Any]], bytes] = dumps_line):
        self.dir = sessions_dir
        self.path = sessions_dir / INDEX_NAME
        self._lock_path = sessions_dir / LOCK_NAME
        self._encode = encode
        # Incremental read cache: the file identity, bytes consumed, the fold, lines seen.
        self._ident: tuple[int, int] | None = None
        self._offset = 0
        self._entries: dict[str, Entry] = {}
        self.lines = 0
        self._mutex = threading.RLock()  # the TUI may list from a thread while the loop appends
        self._head: tuple[int, int] | None = None  # (inode, compacted size from its header)

    # ------------------------------------------------------------ reading

    def read(self) -> dict[str, Entry] | None:
        """The folded entries (do not mutate), or None when the index file does not exist.

        Only the bytes appended since the last call are parsed, unless the file was replaced.
        """
        with self._mutex:
            return self._read()

    def _read(self) -> dict[str, Entry] | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            self._reset()
            return None
        except OSError as e:
            log.warning("could not read the session index %s: %s", self.path, e)
            self._reset()
            return None
        try:
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino)
            if ident != self._ident or st.st_size < self._offset:
                self._reset()
                self._ident = ident
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(self._offset)
                data = f.read()
        finally:
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a half-written last line waits for the next read
        if end:
            self._offset += end
            self._fold(data[:end].split(b"\n"))
        return self._entries

    def _reset(self) -> None:
        self._ident, self._offset, self._entries, self.lines = None, 0, {}, 0

    def _fold(self, lines: Iterable[bytes]) -> None:
        lines = [raw for raw in lines if raw.strip()]
        self.lines += len(lines)
        objs = json_input.loads_lines(lines)  # a bad line (invalid UTF-8, too deep) is left out
        entries = self._entries
        for obj in objs:
            entry = valid_entry(obj)  # None: the header, or a line not to trust
            if entry is not None:
                merge_entry(entries, entry)

    # ------------------------------------------------------------ writing

    def append(self, entry: Entry) -> None:
        """Append one partial entry. Never raises: the index is only a cache."""
        st = self._append_lines([self._encode(entry)])
        if (
            st is not None
            and st[1] > COMPACT_MIN_BYTES
            and st[1] > 2 * self._compacted_bytes(st[0])
        ):
            self.compact()

    def append_many(self, entries: Iterable[Entry]) -> None:
        self._append_lines([self._encode(e) for e in entries])

    def _append_lines(self, lines: list[bytes]) -> tuple[int, int] | None:
        """Append under the shared lock; return the file's (inode, size) after it."""
        try:
            with self._locked(fcntl.LOCK_SH, wait=True):
                fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                try:
                    for line in lines:
                        write_all(fd, line)
                    st = os.fstat(fd)
                    return st.st_ino, st.st_size
                finally:
                    os.close(fd)
        except OSError as e:
            log.warning("could not update the session index %s: %s", self.path, e)
            return None

    def _compacted_bytes(self, inode: int) -> int:
        """The size the file had when last compacted, from its header line (0 if none)."""
        if self._head is not None and self._head[0] == inode:
            return self._head[1]
        try:
            with open(self.path, "rb") as f:
                head = json_input.loads(f.readline(512))
            size = head["bytes"] if head.get("_type") == "header" else 0
            if not _int_in(size, MAX_SIZE):
                size = 0
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            size = 0
        self._head = (inode, size)
        return size

    def compact(
        self, extra: dict[str, Entry] | None = None, replace: dict[str, Entry] | None = None
    ) -> bool:
        """Rewrite the index as one full entry per live session (plus `extra`), atomically.
        Entries in `replace` (scanned because the folded one was wrong) win over the fold.

        Returns False when another process holds the index lock (it will compact instead).
        """
        try:
            with self._mutex, self._locked(fcntl.LOCK_EX, wait=False) as got:
                if not got:
                    return False
                entries = dict(self._read() or {})
                for e in (extra or {}).values():
                    merge_entry(entries, e)
                for key, e in (replace or {}).items():
                    entries[key] = dict(e)
                on_disk = self._keys_on_disk()
                body = b"".join(self._encode(e) for k, e in entries.items() if k in on_disk)
                live = sum(1 for k in entries if k in on_disk)
                head = self._encode({"_type": "header", "version": 1, "live": live})
                head = self._encode(
                    {"_type": "header", "version": 1, "live": live, "bytes": len(head) + len(body)}
                )
                atomic_write(self.path, head + body, 0o600, keep_mode=False)
                return True
        except OSError as e:
            log.warning("could not compact the session index %s: %s", self.path, e)
            return False

    def _keys_on_disk(self) -> set[str]:
        keys = set()
        for name in os.listdir(self.dir):
            key = filename_to_key(name)
            if key is not None:
                keys.add(key)
        return keys

    @contextlib.contextmanager
    def _locked(self, op: int, *, wait: bool) -> Iterator[bool]:
        """flock on index.lock. A shared wait gives up after ~1 s and proceeds unlocked:
        a stuck compactor must never block a session append (the index is only a cache)."""
        fd = open_private(self._lock_path, os.O_RDWR | os.O_CREAT)
        try:
            got = False
            for _ in range(100 if wait else 1):
                try:
                    fcntl.flock(fd, op | fcntl.LOCK_NB)
                    got = True
                    break
                except BlockingIOError:
                    if wait:
                        time.sleep(0.01)
            yield got
        finally:
            os.close(fd)  # releases the flock

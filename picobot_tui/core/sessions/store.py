"""SessionStore: ids, `latest`, open/lock, listing through the index, search, changes."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from picobot_tui.core.content import content_text
from picobot_tui.core.private_files import ensure_private_dir, open_private
from picobot_tui.core.sessions.export import render_markdown, write_export
from picobot_tui.core.sessions.files import (
    ParsedSession,
    SessionError,
    SessionInfo,
    SessionLocked,
    SessionNotFound,
    check_key,
    dumps_line,
    filename_to_key,
    key_to_filename,
    lock_path,
    now_iso,
    parse_session_bytes,
    read_session_file,
    source_matches,
)
from picobot_tui.core.sessions.handle import OPEN_SESSIONS, Session
from picobot_tui.core.sessions.index import SessionIndex, is_complete
from picobot_tui.core.sessions.listing import listed as _listed
from picobot_tui.core.sessions.listing import pick_latest
from picobot_tui.core.sessions.listing import to_info as _to_info

log = logging.getLogger("picobot")

REBUILD_BULK = 32  # more discoveries than this at once: write a fresh index instead of appends


Infos = list[SessionInfo]  # named outside the class, whose `list` method would shadow it


class SessionStore:
    def __init__(
        self,
        sessions_dir: Path,
        *,
        scrub: Callable[[str], str] | None = None,
        clock: Callable[[], datetime] | None = None,
        on_delete: Callable[[str], None] | None = None,
        workspace: Path | str | None = None,
    ) -> None:
        """`scrub` masks secrets in every line written; `clock` is for tests; `on_delete`
        is called with a session's key once its file is gone (the run wiring passes the
        checkpoint store's deletion, so the sessions know nothing of checkpoints);
        `workspace` (resolved) is the current one: new sessions record it and `latest`
        prefers it."""
        self.dir = Path(sessions_dir)
        self.workspace = str(workspace) if workspace is not None else None
        self._scrub = scrub
        self._clock = clock
        self._on_delete = on_delete
        self._index = SessionIndex(self.dir, self._encode)
        self._dir_ready = False

    # ------------------------------------------------------------ keys

    @staticmethod
    def new_key(channel: str = "cli") -> str:
        """A fresh id: "<channel>:<8 hex>-YYYYMMDD-HHMMSS" (UTC)."""
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        return check_key(f"{channel}:{secrets.token_hex(4)}-{stamp}")

    @staticmethod
    def normalize_key(raw: str) -> str:
        """A bare id gets the "cli:" prefix; "chan:id" is kept. Raises SessionError if malformed."""
        raw = raw.strip()
        return check_key(raw if ":" in raw else f"cli:{raw}")

    def resolve(self, raw: str) -> str:
        """The key `raw` names: "latest", a key, a bare id, or a unique prefix of one."""
        return self.resolve_with_note(raw)[0]

    def resolve_with_note(self, raw: str) -> tuple[str, str | None]:
        """`resolve`, and for "latest" a note when it is not from the current workspace
        (None otherwise): the front ends show it, so a resume is never a surprise."""
        if raw.strip().lower() == "latest":
            return self.latest()
        return self._resolve_id(raw), None

    def latest(self) -> tuple[str, str | None]:
        """The newest session with an answer in the current workspace, else the newest
        anywhere with a note saying so (`listing.pick_latest`)."""
        return pick_latest(self._ranked(), self.workspace)

    def _resolve_id(self, raw: str) -> str:
        raw = raw.strip()
        key = self.normalize_key(raw)
        if self.exists(key):
            return key
        matches = sorted(k for k in self._keys_on_disk() if k.startswith(key))
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
            raise SessionNotFound(
                f"{raw!r} matches {len(matches)} sessions ({shown}); give more of the id"
            )
        raise SessionNotFound(f"no session {key!r}; `picobot sessions list` shows the ids")

    def exists(self, key: str) -> bool:
        try:
            return self._path(self.normalize_key(key)).is_file()
        except SessionError:
            return False

    # ------------------------------------------------------------ open / read

    def open(
        self,
        key: str,
        *,
        model: str | None = None,
        create: bool = True,
        lazy: bool = False,
        source: str | None = None,
        lineage: tuple[str, int] | None = None,
        title: str | None = None,
        workspace: str | None = None,
    ) -> Session:
        """Open for appending, taking the session's exclusive lock (never waits). With
        `lazy`, a new session's file is only created by its first message. `source` (one of
        SOURCES) is recorded in a new session's header: the front end that started it;
        `lineage` (parent key, forked_at) makes it a branch (branch.py), `title` names it;
        `workspace` (default: the store's) is the folder recorded in a new header."""
        key = self.normalize_key(key)
        path = self._path(key)
        if str(path) in OPEN_SESSIONS:
            raise SessionLocked(f"session {key} is already open in this picobot process")
        if not create and not path.is_file():
            raise SessionNotFound(f"no session {key!r}; `picobot sessions list` shows the ids")
        self._ensure_dir()
        fresh = not path.exists()  # a failed start must not leave an empty session behind
        lock_fd = self._lock(key, path, fresh=fresh)
        fd: int | None = None
        session: Session | None = None
        try:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                if not create:
                    raise SessionNotFound(f"no session {key!r}; it was just deleted") from None
                data = b""
            parsed = parse_session_bytes(data, path.name)
            if not (lazy and fresh and not data):
                fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            session = Session(
                key,
                path,
                fd,
                lock_fd,
                parsed,
                encode=self._encode,
                now=self._now,
                index=self._index,
            )
            session.start(
                model,
                source,
                lineage,
                workspace=workspace if workspace is not None else self.workspace,
                title=title,
            )
            if fd is None:
                OPEN_SESSIONS[str(path)] = session
                return session  # no file yet, so nothing to index either
        except BaseException:
            if fresh:  # still under our flock, so nobody else can be writing it
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    lock_path(path).unlink(missing_ok=True)
            if session is not None:
                session.close()  # it owns both descriptors now: close them exactly once
            else:
                if fd is not None:
                    os.close(fd)
                os.close(lock_fd)
            raise
        OPEN_SESSIONS[str(path)] = session
        self._index.append(session.index_entry())  # also repairs a stale entry
        for w in parsed.warnings:
            log.warning("%s", w)
        return session

    def load_messages(self, key: str) -> list[dict[str, Any]]:
        """Every readable message, in order. Takes no lock; bad lines are logged and skipped."""
        parsed = self._read(self.normalize_key(key))
        for w in parsed.warnings:
            log.warning("%s", w)
        return parsed.messages

    def info(self, key: str) -> SessionInfo:
        key = self.normalize_key(key)
        if not self._path(key).is_file():
            raise SessionNotFound(f"no session {key!r}; `picobot sessions list` shows the ids")
        entry = (self._index.read() or {}).get(key)
        if not is_complete(entry) or entry.get("size", 0) > self._file_size(key):
            entry = self._scan(key)
            self._index.append(entry)
        return _to_info(key, entry)

    def _file_size(self, key: str) -> int:
        try:
            return os.stat(self._path(key)).st_size
        except OSError:
            return 0

    # ------------------------------------------------------------ listing and search

    def _ranked(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, index entry) of every session, most recently updated first."""
        return sorted(
            self._live_entries().items(),
            key=lambda kv: (kv[1].get("updated") or "", kv[1].get("created") or "", kv[0]),
            reverse=True,
        )

    def _ranked_from(
        self, source: str | None, workspace: str | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        """`_ranked`, only the sessions passing the source filter `source` (SOURCE_FILTERS)
        and, when given, started in `workspace`."""
        ranked = self._ranked()
        if source is None and workspace is None:
            return ranked
        return [
            (k, e)
            for k, e in ranked
            if source_matches(e.get("source"), source)
            and (workspace is None or e.get("workspace") == workspace)
        ]

    def list(
        self,
        limit: int | None = None,
        offset: int = 0,
        *,
        source: str | None = None,
        workspace: str | None = None,
        unanswered: bool = False,
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first; with `source` (a SOURCE_FILTERS name), only
        those that front end started; with `workspace`, only those started there. A session
        without an answer (a run that failed first) is left out unless `unanswered`. Reads
        the index, not the session files."""
        return self.list_counted(
            limit, offset, source=source, workspace=workspace, unanswered=unanswered
        )[0]

    def list_counted(
        self,
        limit: int | None = None,
        offset: int = 0,
        *,
        source: str | None = None,
        workspace: str | None = None,
        unanswered: bool = False,
    ) -> tuple[Infos, int]:
        """`list`, and how many sessions the filters passed that were left out for having
        no answer (0 with `unanswered`)."""
        ranked = self._ranked_from(source, workspace)
        if not unanswered:
            shown = [(k, e) for k, e in ranked if _listed(e)]
            hidden = len(ranked) - len(shown)
            ranked = shown
        else:
            hidden = 0
        end = None if limit is None else offset + limit
        return [_to_info(k, e) for k, e in ranked[offset:end]], hidden

    def list_here_or_all(
        self, limit: int | None = None, *, source: str | None = None
    ) -> tuple[Infos, bool]:
        """The first `limit` listed sessions of the store's workspace or, when it has none,
        of every folder's, ranked once; and True in the second case."""
        ranked = [(k, e) for k, e in self._ranked_from(source) if _listed(e)]
        here = self.workspace
        mine = [(k, e) for k, e in ranked if e.get("workspace") == here] if here else []
        chosen = mine or ranked
        return [_to_info(k, e) for k, e in chosen[:limit]], not mine

    def search(
        self,
        query: str,
        limit: int = 50,
        *,
        source: str | None = None,
        workspace: str | None = None,
    ) -> Iterator[SessionInfo]:
        """Sessions whose title or any message matches `query` (case-insensitive), newest
        first, yielded as they are found; `source` and `workspace` filter as in `list`.
        Sessions without an answer are searched too: their text is the user's."""
        q = query.strip().lower()
        if limit <= 0:
            return
        found = 0
        # SessionInfo is built for hits only: building all 10,000 first was most of the
        # time to the first hit (bench #9c).
        for key, entry in self._ranked_from(source, workspace):
            title = entry.get("title") or entry.get("auto_title") or ""
            if not q or q in title.lower() or self._file_matches(key, q):
                yield _to_info(key, entry)
                found += 1
                if found >= limit:
                    return

    def _file_matches(self, key: str, q: str) -> bool:
        try:
            with open(self._path(key), "rb") as f:
                data = f.read()
        except OSError:
            return False
        # Cheap rejection on raw bytes: lines are UTF-8 JSON, so text without characters
        # that JSON escapes appears verbatim. Other queries go straight to parsing.
        if not any(c in q for c in '"\\') and all(c >= " " for c in q):
            if q.isascii():
                if q.encode() not in data.lower():
                    return False
            elif q not in data.decode("utf-8", "replace").lower():
                return False
        return any(q in _searchable(m).lower() for m in parse_session_bytes(data, key).messages)

    # ------------------------------------------------------------ changes

    def rename(self, key: str, title: str) -> None:
        key = self.normalize_key(key)
        path = self._path(key)
        holder = OPEN_SESSIONS.get(str(path))
        if holder is not None:
            holder.set_title(title)
            return
        with self._held(key) as session:
            session.set_title(title)

    def delete(self, key: str) -> None:
        key = self.normalize_key(key)
        path = self._path(key)
        if str(path) in OPEN_SESSIONS:
            raise SessionLocked(f"session {key} is open in this picobot process; close it first")
        if not path.is_file():
            raise SessionNotFound(f"no session {key!r}; `picobot sessions list` shows the ids")
        lock_fd = self._lock(key, path)
        try:
            path.unlink(missing_ok=True)
            lock_path(path).unlink(missing_ok=True)
        finally:
            os.close(lock_fd)
        self._index.append({"key": key, "deleted": True})
        if self._on_delete is not None:
            self._on_delete(key)  # its checkpoints go with it (run.session_stores)

    def in_use(self, key: str) -> bool:
        """Whether a picobot (this process or another) holds the session open: `delete`
        would refuse it. A probe only: the answer can change right after."""
        path = self._path(self.normalize_key(key))
        if str(path) in OPEN_SESSIONS:
            return True
        try:
            fd = os.open(lock_path(path), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False  # no lock file: nobody has it open
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # releases the probe's shared lock
        return False

    def export_markdown(self, key: str) -> str:
        key = self.normalize_key(key)
        parsed = self._read(key)
        return render_markdown(self.info(key), parsed.messages)

    def export_file(self, key: str, directory: Path) -> Path:
        """Write the session's Markdown transcript to its export file (`export_filename`)
        in `directory`; returns the path. Raises SessionError or OSError."""
        key = self.normalize_key(key)
        return write_export(directory, key, self.export_markdown(key))

    # ------------------------------------------------------------ internals

    def _now(self) -> str:
        return now_iso(self._clock() if self._clock else None)

    def _encode(self, obj: dict[str, Any]) -> bytes:
        line = dumps_line(obj)
        if self._scrub is not None:
            line = self._scrub(line.decode("utf-8")).encode("utf-8")
        return line

    def _path(self, key: str) -> Path:
        return self.dir / key_to_filename(key)

    def _ensure_dir(self) -> None:
        if not self._dir_ready:
            try:
                ensure_private_dir(self.dir)
            except OSError as e:
                raise SessionError(f"cannot create the sessions directory {self.dir}: {e}") from e
            self._dir_ready = True

    def _lock(self, key: str, path: Path, *, fresh: bool = False) -> int:
        """Take the session's flock (non-blocking) and record our pid; return the lock fd.
        With `fresh` (a new session), a lock file that cannot be written is removed again."""
        lock_file = lock_path(path)
        while True:
            try:
                fd = open_private(lock_file, os.O_RDWR | os.O_CREAT)
            except OSError as e:
                raise SessionError(
                    f"cannot create the lock file {lock_file}: {e.strerror or e}"
                ) from e
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise SessionLocked(
                    f"session {key} is in use by another picobot process (pid {pid}); "
                    "finish there, or start a new session"
                ) from None
            # delete() may have unlinked the lock file between our open and flock.
            try:
                same = os.stat(lock_file).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                except OSError as e:  # a full disk (ENOSPC), a quota, a size limit
                    if fresh:
                        with contextlib.suppress(OSError):
                            lock_file.unlink()
                    os.close(fd)
                    raise SessionError(
                        f"cannot write the lock file {lock_file}: {e.strerror or e}. "
                        "Free some disk space or check the directory's permissions."
                    ) from e
                return fd
            os.close(fd)

    @contextlib.contextmanager
    def _held(self, key: str) -> Iterator[Session]:
        session = self.open(key, create=False)
        try:
            yield session
        finally:
            session.close()

    def _read(self, key: str) -> ParsedSession:
        try:
            return read_session_file(self._path(key))
        except FileNotFoundError:
            raise SessionNotFound(
                f"no session {key!r}; `picobot sessions list` shows the ids"
            ) from None
        except OSError as e:
            raise SessionError(f"cannot read session {key}: {e}") from e

    def _keys_on_disk(self) -> set[str]:
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return set()
        return {k for k in map(filename_to_key, names) if k is not None}

    def _scan(self, key: str) -> dict[str, Any]:
        """A full index entry from the session file itself."""
        path = self._path(key)
        try:
            parsed = read_session_file(path)
            mtime = os.stat(path).st_mtime
        except OSError:
            parsed, mtime = ParsedSession(), 0.0
        # ParsedSession keeps only well-formed timestamps, so the index accepts this entry.
        created = parsed.meta.get("created") or now_iso(datetime.fromtimestamp(mtime, UTC))
        return {
            "key": key,
            "created": created,
            "model": parsed.meta.get("model"),
            "source": parsed.meta.get("source"),
            "parent": parsed.meta.get("parent"),
            "forked_at": parsed.meta.get("forked_at"),
            "workspace": parsed.meta.get("workspace"),
            "answered": parsed.answered,
            "title": parsed.meta.get("title"),
            "auto_title": parsed.auto_title,
            "updated": parsed.last_ts or created,
            "message_count": len(parsed.messages),
            "size": parsed.size,
        }

    def _sizes_on_disk(self) -> dict[str, int]:
        """The size of every session file, by key (one scandir; ~2 ms per 1,000 files)."""
        sizes: dict[str, int] = {}
        try:
            with os.scandir(self.dir) as it:
                for entry in it:
                    key = filename_to_key(entry.name)
                    if key is not None:
                        with contextlib.suppress(OSError):
                            sizes[key] = entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            pass
        return sizes

    def _live_entries(self) -> dict[str, dict[str, Any]]:
        """Index entries for exactly the session files on disk, repairing the index."""
        # The index first, then the sizes: files only grow, so an honest line never claims
        # more than the size seen after it (a writer adds its index line after its write).
        indexed = self._index.read()
        sizes = self._sizes_on_disk()
        on_disk = set(sizes)
        view = dict(indexed or {})
        missing = [k for k in on_disk if not is_complete(view.get(k))]
        # An entry claiming a larger file than there is cannot be true, and every later
        # update (smaller size) would lose against it: that row froze. Scan it instead.
        wrong = [
            k
            for k in on_disk
            if k in view and view[k].get("size", 0) > sizes[k] and k not in missing
        ]
        scanned = {k: self._scan(k) for k in missing}
        view.update(scanned)
        if wrong:
            fixed = {k: self._scan(k) for k in wrong}
            view.update(fixed)
            self._ensure_dir()
            self._index.compact(replace=fixed)
        stale = len(view) - len(on_disk)
        if on_disk and (indexed is None or len(scanned) > REBUILD_BULK):
            self._ensure_dir()
            if not self._index.compact(scanned):
                self._index.append_many(scanned.values())
        elif scanned:
            self._index.append_many(scanned.values())
        elif stale > 0 or self._index.lines > 2 * len(on_disk) + 32:
            self._index.compact()
        return {k: e for k, e in view.items() if k in on_disk}


def _searchable(m: dict[str, Any]) -> str:
    parts = [content_text(m.get("content"))]
    for call in m.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(str(fn.get("name") or ""))
            parts.append(str(fn.get("arguments") or ""))
    return "\n".join(parts)

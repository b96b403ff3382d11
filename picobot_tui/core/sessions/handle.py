"""An open session: the exclusive lock, an O_APPEND descriptor and the messages so far."""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from picobot_tui.core.private_files import open_private, write_all
from picobot_tui.core.sessions.files import (
    FORMAT_VERSION,
    ROLES,
    ParsedSession,
    SessionError,
    SessionInfo,
    clean_strings,
    is_answer,
    lock_path,
    make_title,
)
from picobot_tui.core.sessions.index import SessionIndex

TITLE_LIMIT = 200

# Sessions open in this process, by path: a second open() gets a clear message, and
# rename() of an open session goes through the holder so its in-memory info stays right.
OPEN_SESSIONS: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()


def clean_title(title: str) -> str | None:
    text = " ".join(str(title).split())[:TITLE_LIMIT]
    return text or None


class Session:
    """An open session: holds the lock and an O_APPEND descriptor. Use as a context manager.

    The store opens it and hands over what it shares with it: `encode` (one scrubbed JSON
    line), `now` (the store's clock) and the store's `index`, so the handle never needs the
    store itself."""

    key: str
    path: Path
    info: SessionInfo
    messages: list[dict[str, Any]]
    warnings: list[str]

    def __init__(
        self,
        key: str,
        path: Path,
        fd: int | None,
        lock_fd: int,
        parsed: ParsedSession,
        *,
        encode: Callable[[dict[str, Any]], bytes],
        now: Callable[[], str],
        index: SessionIndex,
    ) -> None:
        """`fd` None: a new session whose file is created by its first write (see `start`),
        so a run that ends before any message leaves no session behind."""
        self._encode = encode
        self._now = now
        self._index = index
        self._fd: int | None = fd
        self._lock_fd: int | None = lock_fd
        self._deferred: bytes | None = None
        self._closed = False
        self._needs_newline = not parsed.ends_clean  # a torn tail stays on its own line
        self._size = parsed.size  # the file only grows, and only we write it: exact
        self.key = key
        self.path = path
        self.messages = parsed.messages
        self.warnings = parsed.warnings
        meta = parsed.meta
        self._meta_seen = bool(meta)
        self._title: str | None = meta.get("title")
        self._auto_title = parsed.auto_title
        created = meta.get("created") or now()
        self.info = SessionInfo(
            key=key,
            title=self._title or self._auto_title or "",
            created=created,
            updated=parsed.last_ts or created,
            message_count=len(parsed.messages),
            model=meta.get("model"),
            source=meta.get("source"),
            parent=meta.get("parent"),
            forked_at=meta.get("forked_at"),
            workspace=meta.get("workspace"),
            answered=parsed.answered,
        )

    # ------------------------------------------------------------ writing

    def start(
        self,
        model: str | None,
        source: str | None = None,
        lineage: tuple[str, int] | None = None,
        *,
        workspace: str | None = None,
        title: str | None = None,
    ) -> None:
        """Called once by the store after opening: a file without a header gets one (a
        descriptor-less new session keeps it for its first write), recording `source`, the
        front end that started it, `workspace` (the resolved folder), `title` (a branch's),
        and for a branch `lineage` (parent key, forked_at); a header naming another model
        records the new one."""
        if not self._meta_seen:
            header = {
                "_type": "meta",
                "version": FORMAT_VERSION,
                "key": self.key,
                "created": self.info.created,
                "model": model,
                "title": None,
            }
            if source is not None:
                header["source"] = source
                self.info.source = source
            if lineage is not None:
                header["parent"], header["forked_at"] = lineage
                self.info.parent, self.info.forked_at = lineage
            if workspace is not None:
                header["workspace"] = self.info.workspace = workspace
            if title is not None:
                self._title = clean_title(title)
                header["title"] = self._title
                self.info.title = self._title or ""
            if self._fd is None:
                self._deferred = self._encode(header)
            else:
                self._write(self._encode(header))
            self.info.model = model
        elif model is not None and model != self.info.model:
            self._set_model(model)

    def append(self, message: dict[str, Any]) -> None:
        """Store one message: a single write of one JSON line. Adds "ts" when missing."""
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ValueError(f"not a chat message (role must be one of {sorted(ROLES)})")
        if "_type" in message:
            raise ValueError('a message may not carry a "_type" key (reserved for metadata)')
        now = self._now()
        msg = clean_strings(message)  # what is kept in memory is what the file holds
        msg.setdefault("ts", now)
        self._write(self._encode(msg))
        self.messages.append(msg)
        self.info.message_count += 1
        self.info.updated = now
        entry: dict[str, Any] = {
            "key": self.key,
            "updated": now,
            "message_count": self.info.message_count,
            "size": self._size,
        }
        if not self.info.answered and is_answer(msg):
            self.info.answered = entry["answered"] = True
        if self._auto_title is None and msg["role"] == "user":
            self._auto_title = make_title(msg.get("content")) or None
            if self._auto_title:
                entry["auto_title"] = self._auto_title
                if not self._title:
                    self.info.title = self._auto_title
        self._index.append(entry)

    def set_title(self, title: str) -> None:
        """Rename; an empty title goes back to the first user message."""
        self._title = clean_title(title)
        self._write(self._encode({"_type": "meta", "title": self._title, "ts": self._now()}))
        self.info.title = self._title or self._auto_title or ""
        self._index.append({"key": self.key, "title": self._title, "size": self._size})

    def _set_model(self, model: str) -> None:
        self._write(self._encode({"_type": "meta", "model": model, "ts": self._now()}))
        self.info.model = model

    def _write(self, line: bytes) -> None:
        if self._closed:
            raise SessionError(f"session {self.key} is closed")
        created = False
        if self._fd is None:  # deferred: the file appears with its first line
            try:
                self._fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            except OSError as e:
                raise self._save_error(e) from e
            line, self._deferred, created = (self._deferred or b"") + line, None, True
        if self._needs_newline:
            line = b"\n" + line  # a failed write may have left part of a line
        try:
            write_all(self._fd, line)
        except OSError as e:
            self._needs_newline = True
            with contextlib.suppress(OSError):
                self._size = os.fstat(self._fd).st_size
            raise self._save_error(e) from e
        self._needs_newline = False
        self._size += len(line)
        if created:
            self._index.append(self.index_entry())

    def _save_error(self, e: OSError) -> SessionError:
        return SessionError(
            f"could not save to session {self.key} ({self.path}): {e.strerror or e}. "
            "Free some disk space or check the directory's permissions."
        )

    def index_entry(self) -> dict[str, Any]:
        """This session's full entry for the store's index."""
        return {
            "key": self.key,
            "created": self.info.created,
            "model": self.info.model,
            "source": self.info.source,
            "parent": self.info.parent,
            "forked_at": self.info.forked_at,
            "workspace": self.info.workspace,
            "answered": self.info.answered,
            "title": self._title,
            "auto_title": self._auto_title,
            "updated": self.info.updated,
            "message_count": self.info.message_count,
            "size": self._size,
        }

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Release the lock. Safe to call twice."""
        if OPEN_SESSIONS.get(str(self.path)) is self:
            del OPEN_SESSIONS[str(self.path)]
        fd, lock_fd = self._fd, self._lock_fd
        self._fd = self._lock_fd = None
        self._closed = True
        if self._deferred is not None and lock_fd is not None:
            # Never written: no session file exists, so the lock file goes too (under
            # the flock, as delete() does).
            with contextlib.suppress(OSError):
                lock_path(self.path).unlink()
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if lock_fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(lock_fd, 0)
            with contextlib.suppress(OSError):
                os.close(lock_fd)  # releases the flock

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        return f"<Session {self.key} messages={self.info.message_count}>"

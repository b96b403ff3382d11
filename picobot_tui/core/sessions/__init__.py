"""Append-only JSONL sessions: ids, `latest`, locking, a listing index, search, export.

On disk, in the sessions directory (0700), one file per session (0600):

    cli_1a2b3c4d-20250101-120000.jsonl
      {"_type":"meta","version":1,"key":"cli:…","created":"…Z","model":"…","title":null,
       "source":"tui","workspace":"/home/me/project"}      tui, headless (-m), json, library
      {"role":"user","content":"hi","ts":"…Z"}            one line per message, as appended
      {"_type":"meta","title":"Renamed","ts":"…Z"}         later metadata changes, appended
    cli_1a2b3c4d-20250101-120000.jsonl.lock              flock + holder's pid
    index.jsonl, index.lock                              the listing cache (index.py)

The session file is the truth; the index is a cache that `list()` repairs (files missing from
it are scanned, entries without a file dropped) and rebuilds when it is gone.

A session the model never answered (a run that failed first) is kept whole but is neither
listed nor `latest` until it has an answer; `latest` prefers the store's workspace
(listing.py).

Modules: files (keys, private files, tolerant JSONL), index (the cache), listing (what a
listing shows, `latest`), handle (Session:
gets the store's encoder, clock and index as arguments, never the store), store
(SessionStore: ids and `resolve`, the one session-id resolver every front end uses),
export (Markdown, `export_filename`, the one export file-name rule, and `default_export_dir`,
~/.picobot/exports), prune (durations and deleting old sessions, never one in use).
"""

from __future__ import annotations

from picobot_tui.core.sessions.files import (
    SessionError,
    SessionInfo,
    SessionLocked,
    SessionNotFound,
    clean_strings,
)
from picobot_tui.core.sessions.handle import Session
from picobot_tui.core.sessions.store import SessionStore

__all__ = [
    "Session",
    "SessionError",
    "SessionInfo",
    "SessionLocked",
    "SessionNotFound",
    "SessionStore",
    "clean_strings",
]

"""Low-level pieces of the session store: keys, file names, private files, tolerant JSONL.

Nothing here knows about the index or locking; `sessions.py` composes these.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.content import content_text
from picobot_tui.core.textsafe import clean_strings, clean_text
from picobot_tui.core.visible import label

__all__ = ["clean_strings", "clean_text"]  # re-exported: the package's names

FORMAT_VERSION = 1
ROLES = frozenset({"user", "assistant", "tool", "system"})
TITLE_MAX = 60

# A channel never contains "_", so "<channel>_<id>.jsonl" maps back to exactly one key.
_CHANNEL = r"[A-Za-z0-9][A-Za-z0-9-]{0,31}"
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_KEY_RE = re.compile(rf"({_CHANNEL}):({_ID})")
_FILE_RE = re.compile(rf"({_CHANNEL})_({_ID})\.jsonl")


@dataclass
class SessionInfo:
    key: str
    title: str
    created: str
    updated: str
    message_count: int
    model: str | None
    source: str | None = None  # the front end that started it (SOURCES); None: older picobot
    parent: str | None = None  # a branch: the session it was made from (branch.py)
    forked_at: int | None = None  # a branch: the parent's turn it starts again from
    workspace: str | None = None  # the resolved workspace it was started in; None: unknown
    # Whether the model ever answered (`is_answer`): a run that failed before any answer
    # leaves a session that `list` and `latest` skip until it gets one (issue 25, point 5).
    answered: bool = True


# The front end that started a session, in its header's "source": the TUI, `agent -m`,
# `agent --json` and the library API. A filter names a group of them.
SOURCES = ("tui", "headless", "json", "library")
SOURCE_FILTERS: dict[str, frozenset[str]] = {
    "tui": frozenset({"tui"}),
    "headless": frozenset({"headless", "json", "library"}),
}


def source_matches(source: str | None, wanted: str | None) -> bool:
    """Whether a session started by `source` passes the filter `wanted` (None: every one).
    A session without a recorded source (from an older picobot) passes only None."""
    return wanted is None or source in SOURCE_FILTERS[wanted]


class SessionError(Exception):
    """Base of every session error. The message is shown to the user as is."""


class SessionNotFound(SessionError):
    pass


class SessionLocked(SessionError):
    pass


# ---------------------------------------------------------------- keys and names


def check_key(key: str) -> str:
    """Return `key` if it is a well-formed "channel:id", else raise SessionError."""
    if not _KEY_RE.fullmatch(key):
        raise SessionError(
            f"invalid session id {label(key, 120, exact=True)!r}: use letters, digits, '.', '-' and '_' "
            "(for example cli:1a2b3c4d-20250101-120000)"
        )
    return key


def is_key(value: Any) -> bool:
    """True for a well-formed "channel:id" string."""
    return isinstance(value, str) and _KEY_RE.fullmatch(value) is not None


_TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z")


def is_timestamp(value: Any) -> bool:
    """True for a timestamp as `now_iso` writes it (they sort as text, so only that form)."""
    return isinstance(value, str) and _TS_RE.fullmatch(value) is not None


def key_to_filename(key: str) -> str:
    return check_key(key).replace(":", "_", 1) + ".jsonl"


def filename_to_key(name: str) -> str | None:
    """The key a session file name stands for, or None for any other file."""
    m = _FILE_RE.fullmatch(name)
    return f"{m.group(1)}:{m.group(2)}" if m else None


def lock_path(path: Path) -> Path:
    """The lock file beside a session file."""
    return path.with_name(path.name + ".lock")


def now_iso(clock: datetime | None = None) -> str:
    """ISO 8601 UTC with microseconds and a "Z": sorts lexicographically = chronologically."""
    t = (clock or datetime.now(UTC)).astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def is_answer(message: dict[str, Any]) -> bool:
    """An assistant message that says something: text or a tool call. The empty marker an
    interrupt leaves before any text is not one."""
    if message.get("role") != "assistant":
        return False
    return bool(message.get("tool_calls")) or bool(content_text(message.get("content")).strip())


def make_title(content: Any) -> str:
    """A one-line title from a message's content, cut to about TITLE_MAX characters, its
    controls and invisible characters shown as stand-ins (`label`)."""
    return label(content_text(content), TITLE_MAX)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def dumps_line(obj: dict[str, Any]) -> bytes:
    """One JSON line, UTF-8 (searchable as raw bytes), ending in "\\n".

    Lone surrogates can't be UTF-8 encoded (nor sent to a provider): they become U+FFFD.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_json_default)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return clean_text(text).encode("utf-8") + b"\n"  # still valid JSON


# ---------------------------------------------------------------- tolerant parsing


@dataclass
class ParsedSession:
    """What a session file holds, with everything unreadable skipped and reported."""

    meta: dict[str, Any] = field(default_factory=dict)  # header merged with later meta lines
    messages: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    last_ts: str | None = None  # "ts" of the last message
    auto_title: str | None = None  # from the first user message
    answered: bool = False  # holds an answer (`is_answer`)
    size: int = 0
    ends_clean: bool = True  # empty, or ends with "\n"


def parse_session_bytes(data: bytes, name: str) -> ParsedSession:
    """Parse a session file's bytes. Never raises: bad lines become warnings."""
    out = ParsedSession(size=len(data), ends_clean=not data or data.endswith(b"\n"))
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with "\n"
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        _parse_line(out, raw, lineno, name)
    if tail.strip():
        # No final "\n": the last write was cut short (crash, full disk). A proper prefix of
        # a JSON object never parses as one, so a tail that parses is the whole message.
        # Either way the next append starts on a fresh line.
        probe = ParsedSession()
        _parse_line(probe, tail, len(lines) + 1, name)
        if probe.warnings:
            out.warnings.append(f"skipped a torn last line ({len(tail)} bytes) in {name}")
        else:
            _parse_line(out, tail, len(lines) + 1, name)
    return out


_META_STR = ("key", "created", "model", "title", "source", "parent", "workspace")
_UNREADABLE = {"utf8": "invalid UTF-8", "depth": "nested too deeply"}


def _is_part(part: Any) -> bool:
    """One part of a list content, as the OpenAI format has it."""
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return False
    if part["type"] == "text":
        return isinstance(part.get("text"), str)
    if part["type"] == "image_url":
        url = part.get("image_url")
        return isinstance(url, str) or (isinstance(url, dict) and isinstance(url.get("url"), str))
    return True  # another kind of part: the provider judges it


def _is_content(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, list) and all(_is_part(p) for p in value)


def _is_call(call: Any) -> bool:
    if not isinstance(call, dict):
        return False
    fn = call.get("function")
    return (
        isinstance(call.get("id"), str)
        and bool(call["id"])
        and call.get("type", "function") == "function"
        and isinstance(fn, dict)
        and isinstance(fn.get("name"), str)
        and bool(fn["name"])
        and isinstance(fn.get("arguments", ""), str)
    )


def malformed_message(m: dict[str, Any]) -> str | None:
    """Why a stored message could not be sent to a provider as it is (None when it can).

    Such a line (hand-edited, damaged) is skipped like any unreadable line, so no consumer
    (history repair, export, the UI) meets a tool call that is not an object with an id.
    The results of a skipped assistant message become orphans, which `history.repair`
    drops, so the tool pairs stay consistent.
    """
    role = m["role"]
    content = m.get("content")
    if "name" in m and not isinstance(m["name"], str):
        return "a name that is not text"
    if role == "tool":
        if not isinstance(m.get("tool_call_id"), str) or not m["tool_call_id"]:
            return "a tool result without a tool_call_id"
        return None if _is_content(content) else "a tool result without text content"
    if role != "assistant":
        return None if _is_content(content) else f"a {role} message without text content"
    calls = m.get("tool_calls")
    if calls is None or calls == []:
        return None if _is_content(content) else "an assistant message with no content"
    if content is not None and not _is_content(content):
        return "an assistant message with content that is not text"
    if not isinstance(calls, list):
        return "tool_calls is not a list"
    if not all(_is_call(c) for c in calls):
        return "a malformed tool call (it needs an id, a function name and arguments)"
    if len({c["id"] for c in calls}) != len(calls):
        return "two tool calls with the same id"
    return None


def _parse_line(out: ParsedSession, raw: bytes, lineno: int, name: str) -> None:
    try:
        obj = json_input.loads(raw)  # lone surrogates (an older picobot's) are U+FFFD now
    except json_input.JsonInputError as e:
        why = _UNREADABLE.get(e.kind, "not valid JSON")
        out.warnings.append(f"skipped line {lineno} of {name}: {why}")
        return
    if not isinstance(obj, dict):
        out.warnings.append(f"skipped line {lineno} of {name}: not a JSON object")
        return
    if obj.get("_type") == "meta":
        # Renames don't count as activity: `updated` follows messages only. A field of the
        # wrong type (hand-edited or damaged) is dropped rather than handed to the UI.
        out.meta.update(
            {
                k: v
                for k, v in obj.items()
                if k not in ("_type", "ts")
                and (k not in _META_STR or v is None or isinstance(v, str))
                and (k != "created" or is_timestamp(v))
                and (k != "forked_at" or (type(v) is int and v >= 1))
            }
        )
        return
    if obj.get("role") not in ROLES:
        out.warnings.append(f"skipped line {lineno} of {name}: not a chat message")
        return
    problem = malformed_message(obj)
    if problem:
        out.warnings.append(f"skipped line {lineno} of {name}: {problem}")
        return
    out.messages.append(obj)
    ts = obj.get("ts")
    if is_timestamp(ts):
        out.last_ts = ts
    if not out.answered and is_answer(obj):
        out.answered = True
    if out.auto_title is None and obj["role"] == "user":
        out.auto_title = make_title(obj.get("content")) or None


def read_session_file(path: Path) -> ParsedSession:
    """Read and parse a session file. OSError (missing, unreadable) propagates."""
    with open(path, "rb") as f:
        data = f.read()
    return parse_session_bytes(data, path.name)

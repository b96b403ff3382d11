"""Unit tests of the session store's defences (issue 10, points 13, 15-17, 19): surrogate
repair, strict index lines, stricter message validation, lazy new sessions, and a lock file
that cannot be written."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from picobot_tui.core.history import to_provider
from picobot_tui.core.sessions import SessionError, SessionStore
from picobot_tui.core.sessions.files import (
    clean_strings,
    clean_text,
    dumps_line,
    malformed_message,
    parse_session_bytes,
)
from picobot_tui.core.sessions.index import valid_entry

TS = "2026-01-01T00:00:00.000000Z"


# -- 15: surrogates -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("plain", "plain"),
        ("caf\udce9", "caf\ufffd"),  # argv's surrogate escape of the byte 0xE9
        ("\ud83d\ude00", "\U0001f600"),  # a valid pair, as two code points: joined
        ("a\ud800b\udfffc", "a\ufffdb\ufffdc"),  # lone high and low
        ("", ""),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean
    clean_text(raw).encode("utf-8")  # never raises


def test_clean_strings_reaches_keys_lists_and_nested_values() -> None:
    value = {"k\udc80": ["x\udc81", {"y": "z\udc82"}], "n": 5, "none": None}
    assert clean_strings(value) == {"k\ufffd": ["x\ufffd", {"y": "z\ufffd"}], "n": 5, "none": None}


def test_dumps_line_stores_replacement_characters_not_escapes() -> None:
    line = dumps_line({"role": "user", "content": "caf\udce9"})
    assert json.loads(line) == {"role": "user", "content": "caf\ufffd"}
    assert b"\\udce9" not in line


def test_an_escaped_surrogate_on_disk_is_repaired_on_load() -> None:
    data = b'{"role":"user","content":"caf\\udce9","ts":"' + TS.encode() + b'"}\n'
    parsed = parse_session_bytes(data, "x.jsonl")
    assert parsed.messages[0]["content"] == "caf\ufffd"
    assert parsed.warnings == []


# -- 16: index lines ------------------------------------------------------------------------

KEY = "cli:abc"


@pytest.mark.parametrize(
    "line",
    [
        {"key": KEY, "message_count": "3"},
        {"key": KEY, "message_count": True},
        {"key": KEY, "message_count": -1},
        {"key": KEY, "message_count": 10**10},
        {"key": KEY, "size": 1.5},
        {"key": KEY, "size": 2**60},
        {"key": KEY, "updated": 5},
        {"key": KEY, "updated": "yesterday"},
        {"key": KEY, "created": None},
        {"key": KEY, "title": {"a": 1}},
        {"key": KEY, "title": "x" * 5000},
        {"key": KEY, "model": 7},
        {"key": KEY, "deleted": "yes"},
        {"key": "not a key"},
        {"key": 5},
        {"title": "no key"},
        [KEY],
        "junk",
    ],
)
def test_untrustworthy_index_lines_are_rejected(line: object) -> None:
    assert valid_entry(line) is None


def test_a_good_index_line_keeps_known_fields_only() -> None:
    line = {"key": KEY, "updated": TS, "message_count": 3, "size": 10, "title": None, "x": 1}
    assert valid_entry(line) == {
        "key": KEY,
        "updated": TS,
        "message_count": 3,
        "size": 10,
        "title": None,
    }
    assert valid_entry({"key": KEY, "deleted": True, "junk": 1}) == {"key": KEY, "deleted": True}


# -- 17: messages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": [{"type": "text", "text": 5}]},
        {"role": "user", "content": [{"text": "no type"}]},
        {"role": "user", "content": ["bare string"]},
        {"role": "user", "content": [{"type": "image_url", "image_url": 5}]},
        {"role": "tool", "tool_call_id": "c", "content": "r", "name": ["x"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "x", "function": {"name": "f", "arguments": ""}}],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "function": {"name": "f", "arguments": ""}},
                {"id": "c", "function": {"name": "g", "arguments": ""}},
            ],
        },
    ],
)
def test_messages_a_provider_rejects_are_malformed(message: dict) -> None:
    assert malformed_message(message) is not None


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:x"}}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "f"}}],
        },
        {"role": "tool", "tool_call_id": "c", "name": "f", "content": "r"},
    ],
)
def test_good_messages_pass(message: dict) -> None:
    assert malformed_message(message) is None


def test_to_provider_keeps_tool_keys_on_their_own_role_only() -> None:
    assert to_provider({"role": "user", "content": "x", "tool_calls": [], "tool_call_id": "c"}) == {
        "role": "user",
        "content": "x",
    }
    tool = {"role": "tool", "tool_call_id": "c", "name": "f", "content": "r", "ts": TS}
    assert to_provider(tool) == {"role": "tool", "tool_call_id": "c", "name": "f", "content": "r"}


# -- 19: lazy new sessions ------------------------------------------------------------------


def test_a_lazy_session_never_written_leaves_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    key = store.new_key()
    with store.open(key, model="m", lazy=True) as s:
        assert not s.closed
        assert not s.path.exists()
    assert s.closed
    assert sorted(os.listdir(tmp_path / "sessions")) == []
    assert store.list(unanswered=True) == []


def test_a_lazy_session_appears_with_its_first_message(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    key = store.new_key()
    with store.open(key, model="m", lazy=True) as s:
        s.append({"role": "user", "content": "hello"})
    [info] = store.list(unanswered=True)
    assert (info.key, info.model, info.message_count, info.title) == (key, "m", 1, "hello")
    parsed = parse_session_bytes(s.path.read_bytes(), s.path.name)
    assert parsed.meta["key"] == key and parsed.warnings == []
    # And it reopens like any session.
    with store.open(key, create=False) as again:
        assert [m["content"] for m in again.messages] == ["hello"]


# -- 13: a lock file that cannot be written -------------------------------------------------


def test_a_lock_file_that_cannot_be_written_is_a_session_error_and_no_file_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(tmp_path / "sessions")
    key = store.new_key()

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(SessionError, match="No space left on device") as e:
        store.open(key, model="m")
    assert str(tmp_path / "sessions") in str(e.value)
    assert os.listdir(tmp_path / "sessions") == []

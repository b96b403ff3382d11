"""Where a session came from (its header's `source`), the source filter, the export
directory and the prune helpers, against the real store on tmp_path."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.export import default_export_dir, export_filename
from picobot_tui.core.sessions.index import INDEX_NAME
from picobot_tui.core.sessions.prune import older_than, parse_duration, prune


def add(store: SessionStore, key: str, source: str | None, text: str = "hi") -> str:
    with store.open(key, model="demo", source=source) as s:
        s.append({"role": "user", "content": text})
    return key


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions")


def test_the_source_is_in_the_header_the_index_and_the_listing(store: SessionStore) -> None:
    add(store, "cli:t", "tui")
    header = json.loads((store.dir / "cli_t.jsonl").read_text().splitlines()[0])
    assert header["_type"] == "meta" and header["source"] == "tui"
    index = [json.loads(line) for line in (store.dir / INDEX_NAME).read_text().splitlines()]
    assert any(e.get("key") == "cli:t" and e.get("source") == "tui" for e in index)
    assert store.list(unanswered=True)[0].source == "tui"
    # A fresh store with the index gone rebuilds it from the files: the source survives.
    (store.dir / INDEX_NAME).unlink()
    assert SessionStore(store.dir).list(unanswered=True)[0].source == "tui"
    # Reopening from another front end does not change where it started.
    with store.open("cli:t", source="headless") as s:
        s.append({"role": "user", "content": "again"})
    assert SessionStore(store.dir).info("cli:t").source == "tui"


def test_list_and_search_filter_by_source(store: SessionStore) -> None:
    add(store, "cli:old", None, "hi from an older picobot")
    add(store, "cli:tui", "tui", "hi from the tui")
    add(store, "cli:m", "headless", "hi from agent -m")
    add(store, "cli:j", "json", "hi from --json")
    add(store, "lib:a", "library", "hi from the library")
    every = {i.key for i in store.list(unanswered=True)}
    assert every == {"cli:old", "cli:tui", "cli:m", "cli:j", "lib:a"}
    assert [i.key for i in store.list(unanswered=True, source="tui")] == ["cli:tui"]
    assert {i.key for i in store.list(unanswered=True, source="headless")} == {
        "cli:m",
        "cli:j",
        "lib:a",
    }
    # Paging applies within the filter.
    assert len(store.list(unanswered=True, limit=2, source="headless")) == 2
    assert len(store.list(unanswered=True, limit=2, offset=2, source="headless")) == 1
    assert [i.key for i in store.search("hi from", source="tui")] == ["cli:tui"]
    assert {i.key for i in store.search("hi", source="headless")} == {"cli:m", "cli:j", "lib:a"}


def test_a_hand_edited_source_of_the_wrong_type_is_ignored(store: SessionStore) -> None:
    path = store.dir / "cli_x.jsonl"
    store.dir.mkdir(parents=True)
    meta = {"_type": "meta", "version": 1, "key": "cli:x", "source": ["tui"]}
    path.write_text(json.dumps(meta) + "\n" + json.dumps({"role": "user", "content": "x"}) + "\n")
    [info] = store.list(unanswered=True)
    assert info.source is None
    assert store.list(unanswered=True, source="tui") == []


def test_exports_go_to_a_private_directory_under_the_home(
    store: SessionStore, picobot_home: Path
) -> None:
    add(store, "cli:e", "tui", "export me")
    assert default_export_dir() == picobot_home / "exports"
    path = store.export_file("cli:e", default_export_dir())
    assert (
        path
        == picobot_home / "exports" / export_filename("cli:e")
        == (picobot_home / "exports" / "picobot-cli_e.md")
    )
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "export me" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30d", 30 * 86400),
        ("12h", 12 * 3600),
        ("90m", 5400),
        ("2w", 14 * 86400),
        ("1d12h", 36 * 3600),
        (" 7D ", 7 * 86400),
    ],  # fmt: skip
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "30", "d", "30x", "-3d", "0d", "1.5h", "3 days", "99999w"])
def test_bad_durations_say_why(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


def test_prune_deletes_only_old_sessions_and_keeps_one_in_use(tmp_path: Path) -> None:
    def at(day: int) -> SessionStore:
        stamp = datetime(2025, 1, day, 12, tzinfo=UTC)
        return SessionStore(tmp_path / "sessions", clock=lambda: stamp)

    add(at(1), "cli:jan1", "headless")
    add(at(2), "cli:jan2", "tui")
    add(at(20), "cli:jan20", "headless")
    store = SessionStore(tmp_path / "sessions")
    now = datetime(2025, 1, 21, 12, tzinfo=UTC)
    old = older_than(store, timedelta(days=7), now=now)
    assert [i.key for i in old] == ["cli:jan1", "cli:jan2"]  # oldest first
    assert [i.key for i in older_than(store, timedelta(days=7), source="tui", now=now)] == [
        "cli:jan2"
    ]
    held = store.open("cli:jan2", create=False)  # as a running picobot holds it
    try:
        assert store.in_use("cli:jan2") and not store.in_use("cli:jan1")
        result = prune(SessionStore(tmp_path / "sessions"), old)
    finally:
        held.close()
    assert [i.key for i in result.deleted] == ["cli:jan1"]
    assert [i.key for i in result.in_use] == ["cli:jan2"]
    assert {i.key for i in store.list(unanswered=True)} == {"cli:jan2", "cli:jan20"}
    assert not store.in_use("cli:jan2")

"""The session store: ids, round trips, permissions, listing through the index, changes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from picobot_tui.core.sessions import (
    SessionError,
    SessionLocked,
    SessionNotFound,
    SessionStore,
)
from picobot_tui.core.sessions.export import export_filename


class Clock:
    """A deterministic clock: every call is one second later."""

    def __init__(self) -> None:
        self.t = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.t += timedelta(seconds=1)
        return self.t


@pytest.fixture
def sdir(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions"


@pytest.fixture
def store(sdir: Path) -> SessionStore:
    return SessionStore(sdir, clock=Clock())


def make(store: SessionStore, key: str, *texts: str, model: str | None = "m") -> str:
    with store.open(key, model=model) as s:
        for i, text in enumerate(texts):
            s.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return store.normalize_key(key)


TOOL_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "notes/todo.md"}'},
        }
    ],
}
TOOL_RESULT = {
    "role": "tool",
    "tool_call_id": "call_1",
    "name": "read_file",
    "content": "- [ ] ship",
}


# ------------------------------------------------------------------ keys


def test_new_key_shape() -> None:
    key = SessionStore.new_key()
    assert re.fullmatch(r"cli:[0-9a-f]{8}-\d{8}-\d{6}", key)
    assert SessionStore.new_key("telegram").startswith("telegram:")
    assert SessionStore.new_key() != SessionStore.new_key()


def test_normalize_key() -> None:
    assert SessionStore.normalize_key("abc") == "cli:abc"
    assert SessionStore.normalize_key(" abc ") == "cli:abc"
    assert SessionStore.normalize_key("telegram:123") == "telegram:123"


@pytest.mark.parametrize(
    "bad", ["", "../etc", "cli:../x", "cli:a/b", "a\\b", "cli:", ":x", "cli:a b", "x_y:z", "a:b:c"]
)
def test_bad_keys_are_refused(store: SessionStore, bad: str) -> None:
    with pytest.raises(SessionError, match="invalid session id"):
        store.open(bad)
    assert not store.exists(bad)


def test_filename_is_derived_from_key(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:abc", "hi")
    assert (sdir / "cli_abc.jsonl").is_file()


# ------------------------------------------------------------------ round trip


def test_append_and_load_round_trip(store: SessionStore, sdir: Path) -> None:
    key = store.new_key()
    msgs = [
        {"role": "system", "content": "you are picobot"},
        {"role": "user", "content": "read my todo ✓ « ünïcode »"},
        TOOL_CALL,
        TOOL_RESULT,
        {"role": "assistant", "content": "partial", "interrupted": True},
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        {"role": "assistant", "content": "lone \udc80 surrogate"},
    ]
    with store.open(key, model="openai/gpt-4o-mini") as s:
        for m in msgs:
            s.append(m)
        assert s.messages[1]["ts"].endswith("Z")
        assert s.info.message_count == len(msgs)
        in_memory = list(s.messages)
    loaded = store.load_messages(key)
    assert loaded == in_memory
    # A lone surrogate (undecodable argv bytes) is stored as U+FFFD: no provider takes it.
    expected = [*msgs[:-1], {"role": "assistant", "content": "lone \ufffd surrogate"}]
    assert [{k: v for k, v in m.items() if k != "ts"} for m in loaded] == expected
    assert "ts" not in msgs[0]  # the caller's dict is not mutated

    with store.open(key) as s2:
        assert s2.messages == in_memory
        assert s2.warnings == []
        assert s2.info.model == "openai/gpt-4o-mini"

    lines = (sdir / store._path(key).name).read_bytes().split(b"\n")
    header = json.loads(lines[0])
    assert header["_type"] == "meta" and header["key"] == key and header["version"] == 1
    assert header["model"] == "openai/gpt-4o-mini" and header["created"]
    assert len([x for x in lines if x]) == 1 + len(msgs)


def test_caller_ts_is_kept(store: SessionStore) -> None:
    with store.open("cli:ts") as s:
        s.append({"role": "user", "content": "x", "ts": "2020-01-01T00:00:00Z"})
    assert store.load_messages("cli:ts")[0]["ts"] == "2020-01-01T00:00:00Z"


def test_append_refuses_non_messages(store: SessionStore) -> None:
    with store.open("cli:bad") as s:
        for bad in ({"content": "no role"}, {"role": "robot"}, {"role": "user", "_type": "meta"}):
            with pytest.raises(ValueError):
                s.append(bad)  # type: ignore[arg-type]
        assert s.messages == []


def test_append_after_close_is_an_error(store: SessionStore) -> None:
    s = store.open("cli:closed")
    s.close()
    s.close()  # twice is fine
    with pytest.raises(SessionError, match="closed"):
        s.append({"role": "user", "content": "x"})


def test_append_never_rewrites(store: SessionStore, sdir: Path) -> None:
    with store.open("cli:grow") as s:
        s.append({"role": "user", "content": "one"})
        path = s.path
        ino = path.stat().st_ino
        before = path.read_bytes()
        s.append({"role": "assistant", "content": "two"})
        after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == ino


def test_model_change_is_recorded(store: SessionStore) -> None:
    make(store, "cli:mod", "hi", model="a")
    with store.open("cli:mod", model="b") as s:
        assert s.info.model == "b"
    assert store.info("cli:mod").model == "b"
    with store.open("cli:mod") as s:  # no model given: keep it
        assert s.info.model == "b"
    store._index.path.unlink()  # the file alone knows it too
    assert store.info("cli:mod").model == "b"


def test_open_missing_without_create(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound, match="sessions list"):
        store.open("cli:nope", create=False)
    with pytest.raises(SessionNotFound):
        store.load_messages("cli:nope")
    with pytest.raises(SessionNotFound):
        store.info("nope")


def test_second_open_in_same_process_is_refused(store: SessionStore) -> None:
    with store.open("cli:twice"), pytest.raises(SessionLocked, match="already open"):
        store.open("cli:twice")
    store.open("cli:twice").close()  # free again


# ------------------------------------------------------------------ permissions


def test_file_and_dir_modes(tmp_path: Path) -> None:
    sdir = tmp_path / "a" / "b" / "sessions"
    old = os.umask(0o022)
    try:
        store = SessionStore(sdir)
        make(store, "cli:perm", "hello")
        store.list(unanswered=True)
    finally:
        os.umask(old)
    for d in (sdir, sdir.parent, sdir.parent.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    for f in sdir.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert {f.name for f in sdir.iterdir()} >= {"cli_perm.jsonl", "index.jsonl"}


def test_loose_modes_are_tightened(sdir: Path) -> None:
    sdir.mkdir(parents=True, mode=0o755)
    os.chmod(sdir, 0o755)
    f = sdir / "cli_old.jsonl"
    f.write_text('{"role":"user","content":"x"}\n')
    os.chmod(f, 0o644)
    SessionStore(sdir).open("cli:old").close()
    assert stat.S_IMODE(sdir.stat().st_mode) == 0o700
    assert stat.S_IMODE(f.stat().st_mode) == 0o600


# ------------------------------------------------------------------ resolve


def test_resolve(store: SessionStore) -> None:
    a = make(store, "cli:aaaa1111-20250101-000000", "first", "answer")
    b = make(store, "cli:bbbb2222-20250101-000000", "second", "answer")
    assert store.resolve("latest") == b
    assert store.resolve(" LATEST ") == b
    assert store.resolve("aaaa1111-20250101-000000") == a
    assert store.resolve("cli:aaaa1111-20250101-000000") == a
    assert store.resolve("aaaa") == a  # unique prefix
    with store.open(a) as s:  # appending makes it the latest
        s.append({"role": "user", "content": "again"})
    assert store.resolve("latest") == a
    with pytest.raises(SessionNotFound, match="no session 'cli:zzz'"):
        store.resolve("zzz")
    make(store, "cli:aaaa3333", "third")
    with pytest.raises(SessionNotFound, match="matches 2 sessions"):
        store.resolve("aaaa")


def test_resolve_latest_with_no_sessions(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound, match="no sessions with an answer yet"):
        store.resolve("latest")


def test_latest_skips_sessions_without_messages(store: SessionStore) -> None:
    real = make(store, "cli:aaaa1111-20250101-000000", "the real conversation", "yes")
    # An empty session newer than it (an older picobot's idle --json left these behind),
    # and a run that failed before the model answered (issue 25, point 5).
    empty = store.open("cli:bbbb2222-20250101-000000", create=True)
    empty.close()
    failed = make(store, "cli:cccc3333-20250101-000000", "never answered")
    assert store.exists("cli:bbbb2222-20250101-000000")
    assert store.list(unanswered=True)[0].key == failed
    assert [i.key for i in store.list()] == [real]  # neither is listed
    assert store.resolve("latest") == real
    for p in list(store.dir.glob("*.jsonl")):
        if "aaaa1111" in p.name:
            p.unlink()
    with pytest.raises(SessionNotFound, match=r"no sessions with an answer.*1 without an"):
        store.resolve("latest")


# ------------------------------------------------------------------ listing and the index


def test_list_newest_first_with_fields(store: SessionStore) -> None:
    make(store, "cli:one", "first question " * 10, "answer")
    make(store, "cli:two", "second")
    with store.open("cli:empty", model=None):
        pass
    infos = store.list(unanswered=True)
    assert [i.key for i in infos] == ["cli:empty", "cli:two", "cli:one"]
    one = infos[2]
    assert one.message_count == 2 and one.model == "m"
    assert one.title.startswith("first question first") and len(one.title) <= 60
    assert one.title.endswith("…")
    assert one.created < one.updated
    assert infos[0].title == "" and infos[0].message_count == 0 and infos[0].model is None
    assert [i.key for i in store.list(unanswered=True, limit=1, offset=1)] == ["cli:two"]
    assert store.list(unanswered=True, limit=0) == []


def test_list_empty_store_creates_nothing(sdir: Path) -> None:
    assert SessionStore(sdir).list(unanswered=True) == []
    assert not sdir.exists()


def _index_lines(store: SessionStore) -> list[dict]:
    out = []
    for line in store._index.path.read_bytes().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


def test_index_rebuilt_when_deleted(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:a", "alpha", "reply")
    store.rename("cli:a", "Renamed A")
    make(store, "cli:b", "beta")
    expected = store.list(unanswered=True)
    (sdir / "index.jsonl").unlink()
    fresh = SessionStore(sdir)
    assert fresh.list(unanswered=True) == expected
    assert (sdir / "index.jsonl").is_file()
    assert {e.get("key") for e in _index_lines(fresh)} >= {"cli:a", "cli:b"}


@pytest.mark.parametrize(
    "junk",
    [b"\x00\xff garbage\n{not json\n", b'[1,2]\n"str"\n', b"\xff\xfe\xfd", b""],
)
def test_index_rebuilt_when_corrupt(store: SessionStore, sdir: Path, junk: bytes) -> None:
    make(store, "cli:a", "alpha")
    make(store, "cli:b", "beta", "gamma")
    expected = store.list(unanswered=True)
    (sdir / "index.jsonl").write_bytes(junk)
    assert SessionStore(sdir).list(unanswered=True) == expected


def test_index_partially_corrupt(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:a", "alpha")
    make(store, "cli:b", "beta")
    expected = store.list(unanswered=True)
    with open(sdir / "index.jsonl", "ab") as f:
        f.write(b'{"key": "cli:a", "message_count": "garbage\n\xff\xfe\n{"key":')
    assert SessionStore(sdir).list(unanswered=True) == expected


def test_file_missing_from_index_is_discovered(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:a", "alpha")
    store.list(unanswered=True)
    # A session written by something that never touched the index (or crashed before it).
    (sdir / "cli_manual.jsonl").write_text(
        '{"_type":"meta","key":"cli:manual","created":"2030-01-01T00:00:00.000000Z","model":"x"}\n'
        '{"role":"user","content":"made by hand","ts":"2030-01-01T00:00:01.000000Z"}\n'
    )
    (sdir / "notes.txt").write_text("not a session")
    infos = store.list(unanswered=True)
    assert [i.key for i in infos] == ["cli:manual", "cli:a"]
    assert infos[0].title == "made by hand" and infos[0].message_count == 1
    assert infos[0].updated == "2030-01-01T00:00:01.000000Z"


def test_stale_index_entry_is_dropped(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:a", "alpha")
    make(store, "cli:b", "beta")
    store.list(unanswered=True)
    (sdir / "cli_a.jsonl").unlink()  # removed behind the store's back
    assert [i.key for i in store.list(unanswered=True)] == ["cli:b"]
    assert "cli:a" not in {e.get("key") for e in _index_lines(store)}  # compacted away
    with pytest.raises(SessionNotFound):
        store.info("cli:a")


def test_many_discoveries_write_a_fresh_index(store: SessionStore, sdir: Path) -> None:
    for i in range(40):
        make(store, f"cli:s{i:02d}", f"message {i}")
    (sdir / "index.jsonl").write_bytes(b"")
    infos = SessionStore(sdir).list(unanswered=True)
    assert [i.key for i in infos] == [f"cli:s{i:02d}" for i in reversed(range(40))]
    lines = _index_lines(store)
    assert lines[0]["_type"] == "header" and lines[0]["live"] == 40
    assert len(lines) == 41


def test_index_is_compacted_as_it_grows(store: SessionStore, sdir: Path) -> None:
    with store.open("cli:long") as s:
        for i in range(1500):  # ~100 bytes of index per append: passes the 64 KiB floor
            s.append({"role": "user", "content": f"m{i}"})
    size = (sdir / "index.jsonl").stat().st_size
    assert size < 140 * 1024
    lines = _index_lines(store)
    assert any(line.get("_type") == "header" for line in lines)
    assert store.info("cli:long").message_count == 1500


def test_list_compacts_an_index_full_of_old_lines(store: SessionStore, sdir: Path) -> None:
    with store.open("cli:a") as s:
        for i in range(100):
            s.append({"role": "user", "content": f"m{i}"})
    assert len(_index_lines(store)) > 100
    fresh = SessionStore(sdir)
    assert fresh.list(unanswered=True)[0].message_count == 100
    assert len(_index_lines(fresh)) == 2  # header + one entry


def test_crash_between_session_and_index_write_is_repaired_on_open(
    store: SessionStore, sdir: Path
) -> None:
    make(store, "cli:a", "alpha")
    with open(sdir / "cli_a.jsonl", "ab") as f:  # a message the index never heard of
        f.write(b'{"role":"assistant","content":"lost to the index","ts":"2031-01-01T00:00:00Z"}\n')
    assert store.info("cli:a").message_count == 1  # the cache is stale ...
    store.open("cli:a").close()
    assert store.info("cli:a").message_count == 2  # ... until the session is opened


def test_incremental_index_reads_see_other_writers(sdir: Path) -> None:
    s1, s2 = SessionStore(sdir, clock=Clock()), SessionStore(sdir)
    make(s1, "cli:a", "alpha")
    assert [i.key for i in s2.list(unanswered=True)] == ["cli:a"]
    make(s2, "cli:b", "beta")
    assert {i.key for i in s1.list(unanswered=True)} == {"cli:a", "cli:b"}
    s1.rename("cli:b", "from s1")
    assert s2.info("cli:b").title == "from s1"


# ------------------------------------------------------------------ rename, delete


def test_rename(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:r", "what is the weather", "sunny")
    store.rename("r", "  Weather\nchat ")
    assert store.info("cli:r").title == "Weather chat"
    with store.open("cli:r") as s:
        assert s.info.title == "Weather chat"
        s.append({"role": "user", "content": "and tomorrow?"})  # keeps the rename
    assert store.info("cli:r").title == "Weather chat"
    store.rename("cli:r", "")  # back to the automatic title
    assert store.info("cli:r").title == "what is the weather"
    # The rename lives in the session file too, so a rebuilt index keeps it.
    store.rename("cli:r", "Kept")
    (sdir / "index.jsonl").unlink()
    assert SessionStore(sdir).list(unanswered=True)[0].title == "Kept"
    with pytest.raises(SessionNotFound):
        store.rename("cli:missing", "x")


def test_rename_of_a_session_open_here_goes_through_it(store: SessionStore) -> None:
    with store.open("cli:open") as s:
        s.append({"role": "user", "content": "hello"})
        store.rename("cli:open", "Live rename")
        assert s.info.title == "Live rename"
        s.append({"role": "assistant", "content": "hi"})
    assert store.info("cli:open").title == "Live rename"


def test_rename_does_not_reorder(store: SessionStore) -> None:
    make(store, "cli:old", "old")
    make(store, "cli:new", "new")
    store.rename("cli:old", "Renamed")
    assert [i.key for i in store.list(unanswered=True)] == ["cli:new", "cli:old"]


def test_delete(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:d", "bye")
    make(store, "cli:keep", "stay")
    store.delete("d")
    assert not store.exists("cli:d")
    assert not (sdir / "cli_d.jsonl").exists() and not (sdir / "cli_d.jsonl.lock").exists()
    assert [i.key for i in store.list(unanswered=True)] == ["cli:keep"]
    with pytest.raises(SessionNotFound):
        store.delete("cli:d")
    # The key can be used again, with nothing left over from before.
    with store.open("cli:d") as s:
        assert s.messages == [] and s.info.title == ""


def test_delete_of_an_open_session_is_refused(store: SessionStore) -> None:
    with store.open("cli:busy"), pytest.raises(SessionLocked):
        store.delete("cli:busy")
    assert store.exists("cli:busy")


# ------------------------------------------------------------------ search


def _conversation(store: SessionStore, key: str, middle: str) -> None:
    with store.open(key) as s:
        s.append({"role": "user", "content": f"start of {key}"})
        for i in range(10):
            s.append({"role": "assistant", "content": f"filler {i}"})
        s.append({"role": "user", "content": middle})
        for i in range(10):
            s.append({"role": "assistant", "content": f"more filler {i}"})


def test_search_content_in_the_middle(store: SessionStore) -> None:
    _conversation(store, "cli:x1", "the Quokka is a small marsupial")
    _conversation(store, "cli:x2", "nothing to see")
    _conversation(store, "cli:x3", "another QUOKKA sighting")
    found = store.search("quokka")
    assert isinstance(found, Iterator)
    assert [i.key for i in found] == ["cli:x3", "cli:x1"]  # newest first
    assert [i.key for i in store.search("Quokka", limit=1)] == ["cli:x3"]
    assert list(store.search("absent")) == []


def test_search_title_tools_and_special_text(store: SessionStore) -> None:
    make(store, "cli:t", "hello")
    store.rename("cli:t", "Deploy Plan")
    with store.open("cli:tools") as s:
        s.append({"role": "user", "content": "do it"})
        s.append(TOOL_CALL)
        s.append(TOOL_RESULT)
        s.append({"role": "assistant", "content": 'He said "Grüße" \\ ok\nnext line'})
    assert [i.key for i in store.search("deploy plan")] == ["cli:t"]
    assert [i.key for i in store.search("NOTES/TODO.MD")] == ["cli:tools"]  # tool arguments
    assert [i.key for i in store.search("[ ] ship")] == ["cli:tools"]  # tool result
    assert [i.key for i in store.search('"grüße"')] == ["cli:tools"]
    assert [i.key for i in store.search("GRÜSSE".lower().replace("ss", "ß"))] == ["cli:tools"]
    assert [i.key for i in store.search("\\ ok")] == ["cli:tools"]
    assert [i.key for i in store.search("content")] == []  # JSON keys are not content
    assert len(list(store.search(""))) == 2


def test_search_skips_damaged_files(store: SessionStore, sdir: Path) -> None:
    make(store, "cli:ok", "needle in here")
    (sdir / "cli_bad.jsonl").write_bytes(b"\xff\xfe needle \n{broken")
    assert [i.key for i in store.search("needle")] == ["cli:ok"]


# ------------------------------------------------------------------ export


def test_export_markdown(store: SessionStore) -> None:
    with store.open("cli:exp", model="openai/gpt-4o-mini") as s:
        s.append({"role": "user", "content": "Show my TODO"})
        s.append(TOOL_CALL)
        s.append({**TOOL_RESULT, "content": "```\nnested fence\n```"})
        s.append({"role": "assistant", "content": "You have **one** item.", "interrupted": True})
    md = store.export_markdown("exp")
    assert md.startswith("# Show my TODO\n")
    assert "`cli:exp`" in md and "openai/gpt-4o-mini" in md and "**Messages:** 4" in md
    assert "## User" in md and "## Assistant" in md
    assert "**Tool call** `read_file` (`call_1`)" in md
    assert '```json\n{\n  "path": "notes/todo.md"\n}\n```' in md
    assert "## Tool result: `read_file` (`call_1`)" in md
    assert "````\n```\nnested fence\n```\n````" in md  # the fence outgrows the content's
    assert "You have **one** item." in md and "*(interrupted)*" in md
    assert md.index("Show my TODO", 10) < md.index("read_file") < md.index("one** item")
    with pytest.raises(SessionNotFound):
        store.export_markdown("cli:none")


def test_export_malformed_tool_arguments(store: SessionStore) -> None:
    bad = {
        **TOOL_CALL,
        "tool_calls": [{"id": "c", "function": {"name": "x", "arguments": "{oops"}}],
    }
    with store.open("cli:m") as s:
        s.append(bad)
    assert "```json\n{oops\n```" in store.export_markdown("cli:m")


def test_export_file_is_named_by_one_rule(store: SessionStore, tmp_path: Path) -> None:
    with store.open("cli:exp") as s:
        s.append({"role": "user", "content": "Show my TODO"})
    path = store.export_file("exp", tmp_path / "out")  # the directory is created
    assert path == tmp_path / "out" / "picobot-cli_exp.md"
    assert path.read_text(encoding="utf-8") == store.export_markdown("cli:exp")
    with pytest.raises(SessionNotFound):
        store.export_file("cli:none", tmp_path)


@pytest.mark.parametrize("key", ["../../etc/passwd", "a/b\\c", "...", ":"])
def test_export_filename_stays_in_its_directory(key: str) -> None:
    name = export_filename(key)
    assert name.startswith("picobot-") and name.endswith(".md")
    assert "/" not in name and "\\" not in name and ".." not in name


# ------------------------------------------------------------------ scrubbing


def test_scrub_applies_to_every_line(sdir: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    store = SessionStore(sdir, scrub=lambda s: s.replace(secret, "[REDACTED]"))
    with store.open("cli:sec") as s:
        s.append({"role": "user", "content": f"my key is {secret}"})
    store.rename("cli:sec", f"about {secret}")
    for f in sdir.iterdir():
        assert secret.encode() not in f.read_bytes(), f
    assert "[REDACTED]" in store.load_messages("cli:sec")[0]["content"]


def test_a_stale_scan_landing_late_does_not_win(store: SessionStore, sdir: Path) -> None:
    """Another process's list() may scan a session and append what it saw after the owner
    has already recorded newer state: the older (smaller-file) entry must be ignored."""
    with store.open("cli:race") as s:
        s.append({"role": "user", "content": "one"})
        stale = store._scan("cli:race")
        s.append({"role": "assistant", "content": "two"})
        s.append({"role": "user", "content": "three"})
    store._index.append(stale)
    assert store.info("cli:race").message_count == 3
    assert SessionStore(sdir).list(unanswered=True)[0].message_count == 3
    store._index.compact()
    assert SessionStore(sdir).info("cli:race").message_count == 3


def test_failed_header_write_releases_everything(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import picobot_tui.core.sessions.handle as handle

    def full_disk(fd: int, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(handle, "write_all", full_disk)
    with pytest.raises(SessionError, match="No space left on device.*Free some disk space"):
        store.open("cli:full")
    monkeypatch.undo()
    with store.open("cli:full") as s:  # the lock was released, and nothing half-open remains
        s.append({"role": "user", "content": "fits now"})
    assert [m["content"] for m in store.load_messages("cli:full")] == ["fits now"]


def test_write_failure_mid_session_keeps_later_lines_clean(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import picobot_tui.core.sessions.handle as handle

    real = handle.write_all
    with store.open("cli:enospc") as s:
        s.append({"role": "user", "content": "before"})

        def half(fd: int, data: bytes) -> None:
            real(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(handle, "write_all", half)
        with pytest.raises(SessionError):
            s.append({"role": "assistant", "content": "torn by a full disk"})
        monkeypatch.setattr(handle, "write_all", real)
        s.append({"role": "assistant", "content": "after"})
        assert [m["content"] for m in s.messages] == ["before", "after"]
    with store.open("cli:enospc") as s:
        assert [m["content"] for m in s.messages] == ["before", "after"]
        assert len(s.warnings) == 1 and "not valid JSON" in s.warnings[0]

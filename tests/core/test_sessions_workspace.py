"""Sessions and workspaces, and sessions without an answer (issue 25, point 5), in the store:
the header and the index record the workspace; `list` and `latest` skip a session the model
never answered; `latest` prefers the current workspace and says when it falls back; a branch
is titled from its parent; an older index or session file still lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from picobot_tui.core.sessions import SessionNotFound, SessionStore
from picobot_tui.core.sessions.branch import branch
from picobot_tui.core.sessions.index import valid_entry
from tests.core.test_sessions import Clock

A, B = "/work/projects/a", "/work/projects/b"


def chat(store: SessionStore, key: str, *texts: str) -> str:
    """A session of alternating user and assistant messages (one text: never answered)."""
    with store.open(key, model="m") as s:
        for i, text in enumerate(texts):
            s.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return key


def stores(sdir: Path) -> tuple[SessionStore, SessionStore]:
    clock = Clock()
    return SessionStore(sdir, clock=clock, workspace=A), SessionStore(
        sdir, clock=clock, workspace=B
    )


def test_the_workspace_is_in_the_header_the_index_and_the_listing(tmp_path: Path) -> None:
    sdir = tmp_path / "sessions"
    in_a, _ = stores(sdir)
    chat(in_a, "cli:one", "hi", "hello")
    header = json.loads((sdir / "cli_one.jsonl").read_text().splitlines()[0])
    assert header["workspace"] == A
    [info] = in_a.list()
    assert (info.workspace, info.answered) == (A, True)
    (sdir / "index.jsonl").unlink()  # rebuilt from the files: the header says it
    assert SessionStore(sdir).list()[0].workspace == A


def test_a_session_without_an_answer_is_kept_but_not_listed_nor_latest(tmp_path: Path) -> None:
    in_a, _ = stores(tmp_path / "sessions")
    real = chat(in_a, "cli:real", "question", "answer")
    failed = chat(in_a, "cli:failed", "my long careful message")
    interrupted = in_a.open("cli:cut", model="m")
    interrupted.append({"role": "user", "content": "stop me"})
    interrupted.append({"role": "assistant", "content": "", "interrupted": True})
    interrupted.close()
    assert [i.key for i in in_a.list()] == [real]
    assert in_a.resolve("latest") == real
    everything = {i.key: i.answered for i in in_a.list(unanswered=True)}
    assert everything == {real: True, failed: False, "cli:cut": False}
    assert in_a.list_counted()[1] == 2
    assert in_a.load_messages(failed)[0]["content"] == "my long careful message"
    assert [i.key for i in in_a.search("careful")] == [failed]  # the text is findable
    with in_a.open(failed) as s:  # resumed and answered: a conversation like any other
        s.append({"role": "assistant", "content": "done"})
    assert in_a.resolve("latest") == failed
    assert failed in {i.key for i in in_a.list()}


def test_latest_is_this_workspaces_and_says_when_it_is_another(tmp_path: Path) -> None:
    in_a, in_b = stores(tmp_path / "sessions")
    mine = chat(in_a, "cli:mine", "in a", "ok")
    theirs = chat(in_b, "cli:theirs", "in b", "ok")  # newer, elsewhere
    assert in_a.resolve_with_note("latest") == (mine, None)
    assert in_b.resolve_with_note("latest") == (theirs, None)
    assert [i.key for i in in_a.list(workspace=A)] == [mine]
    elsewhere = SessionStore(tmp_path / "sessions", workspace="/work/projects/c")
    key, note = elsewhere.resolve_with_note("latest")
    assert key == theirs
    assert note is not None and "/work/projects/c" in note and B in note
    assert SessionStore(tmp_path / "sessions").resolve_with_note("latest") == (theirs, None)


def test_an_older_session_without_a_workspace_lists_as_unknown(tmp_path: Path) -> None:
    sdir = tmp_path / "sessions"
    sdir.mkdir()
    lines = [
        {"_type": "meta", "version": 1, "key": "cli:old", "created": "2025-01-01T00:00:00.000000Z"},
        {"role": "user", "content": "old", "ts": "2025-01-01T00:00:01.000000Z"},
        {"role": "assistant", "content": "yes", "ts": "2025-01-01T00:00:02.000000Z"},
    ]
    (sdir / "cli_old.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    # An older picobot's index line: no `answered`, no `workspace`. It is scanned once.
    old_entry = {
        "key": "cli:old",
        "created": "2025-01-01T00:00:00.000000Z",
        "updated": "2025-01-01T00:00:02.000000Z",
        "message_count": 2,
        "size": 1,
    }
    (sdir / "index.jsonl").write_text(json.dumps(old_entry) + "\nnot json\n")
    store = SessionStore(sdir, workspace=A)
    [info] = store.list()
    assert (info.key, info.workspace, info.answered) == ("cli:old", None, True)
    assert store.list(workspace=A) == []
    key, note = store.resolve_with_note("latest")
    assert key == "cli:old" and note is not None and "did not record" in note


@pytest.mark.parametrize("bad", [{"answered": "yes"}, {"workspace": 3}, {"workspace": "x" * 5000}])
def test_an_index_line_with_a_bad_new_field_is_not_trusted(bad: dict) -> None:
    assert valid_entry({"key": "cli:a", **bad}) is None


def test_a_branch_is_titled_from_its_parent_and_keeps_its_workspace(tmp_path: Path) -> None:
    in_a, in_b = stores(tmp_path / "sessions")
    parent = chat(in_a, "cli:p", "plan the trip", "ok", "book it", "done", "and a car", "ok")
    new_key, prompt = branch(in_b, parent, 3)
    info = in_b.info(new_key)
    assert (info.title, info.workspace, info.parent, prompt) == (
        "↳ plan the trip, from turn 3",
        A,
        parent,
        "and a car",
    )
    first, _ = branch(in_a, parent, 1)  # nothing answered yet: not listed until it is
    assert in_a.info(first).title == "↳ plan the trip, from turn 1"
    assert first not in {i.key for i in in_a.list()}
    assert first in {i.key for i in in_a.list(unanswered=True)}
    with pytest.raises(SessionNotFound):
        SessionStore(tmp_path / "empty").resolve("latest")


def test_prune_counts_sessions_without_an_answer(tmp_path: Path) -> None:
    from datetime import timedelta

    from picobot_tui.core.sessions.prune import older_than

    store = SessionStore(tmp_path / "sessions", clock=Clock())  # 2025: long ago
    chat(store, "cli:failed", "never answered")
    chat(store, "cli:real", "q", "a")
    assert {i.key for i in older_than(store, timedelta(days=1))} == {"cli:failed", "cli:real"}

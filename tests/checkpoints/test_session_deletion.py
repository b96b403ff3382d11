"""A session's checkpoints go with it from every front end: the sessions package knows
nothing of checkpoints, so each front end must open its store through
`run.session_stores.session_store`, which wires the deletion in."""

from __future__ import annotations

import re
from pathlib import Path

from picobot_tui.core.checkpoints.store import CheckpointStore, checkpoints_root
from picobot_tui.run.session_stores import session_store

ROOT = Path(__file__).resolve().parents[2]


def test_no_front_end_opens_a_session_store_without_the_wiring() -> None:
    built = re.compile(r"\bSessionStore\(")
    offenders = [
        str(p.relative_to(ROOT))
        for p in [*(ROOT / "picobot_tui").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")]
        if p.name != "session_stores.py"
        and p.parent.name != "sessions"
        and built.search(p.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"open the store with run.session_stores.session_store: {offenders}"


def test_deleting_through_the_wired_store_deletes_the_sessions_checkpoints(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    store = session_store(sessions)
    key = store.new_key()
    session = store.open(key)
    session.append({"role": "user", "content": "hi"})
    session.close()
    checkpoints = CheckpointStore(checkpoints_root(tmp_path))
    checkpoints.append(key, {"turn": 1})
    assert checkpoints.record_path(key).exists()
    store.delete(key)
    assert not checkpoints.record_path(key).exists()

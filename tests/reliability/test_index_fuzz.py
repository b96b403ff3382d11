"""The listing index is a cache: whatever lines land in `sessions/index.jsonl` (wrong types,
out-of-range numbers, junk bytes, keys of sessions that do not exist), every session
command still works, lists exactly the session files there are, and a session's next
update shows up (issue 10, point 16). Property-based, in process, against the real store;
the console-script side is in test_disk_and_damage.py.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.core.sessions import SessionInfo, SessionStore
from picobot_tui.core.sessions.files import parse_session_bytes
from tests.reliability.fuzz import fuzz, tally

KEYS = ["cli:aaaa0001-20260101-000000", "cli:bbbb0002-20260101-000000", "tg:cccc0003"]
FIELDS = ["created", "updated", "title", "auto_title", "model", "message_count", "size"]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from([0, 1, 2**31, 2**63, 10**15, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["2026-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z", "", "x" * 5000]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
keys = st.one_of(st.sampled_from(KEYS), st.sampled_from(["cli:nope", "bad key", ""]), json_values)


@st.composite
def index_line(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["entry", "entry", "entry", "json", "bytes", "deleted"]))
    if kind == "bytes":
        return draw(st.binary(max_size=60)).replace(b"\n", b" ")
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    obj: dict[str, Any] = {"key": draw(keys)}
    if kind == "deleted":
        obj["deleted"] = draw(st.one_of(st.just(True), json_scalars))
    for name in draw(st.lists(st.sampled_from([*FIELDS, "extra"]), max_size=5, unique=True)):
        obj[name] = draw(json_values)
    return json.dumps(obj, allow_nan=True).encode()


def _make(sdir: Path) -> SessionStore:
    store = SessionStore(sdir)
    for i, key in enumerate(KEYS):
        with store.open(key, model="m") as s:
            for j in range(i + 1):
                s.append({"role": "user", "content": f"question {key} {j}"})
                s.append({"role": "assistant", "content": "answer"})
    return store


def _truth(sdir: Path, key: str) -> int:
    path = sdir / (key.replace(":", "_", 1) + ".jsonl")
    return len(parse_session_bytes(path.read_bytes(), path.name).messages)


def _well_typed(info: SessionInfo) -> bool:
    return (
        isinstance(info.title, str)
        and isinstance(info.updated, str)
        and isinstance(info.created, str)
        and isinstance(info.message_count, int)
        and 0 <= info.message_count <= 10**9
        and (info.model is None or isinstance(info.model, str))
    )


@fuzz(ci=150, slow=5000)
@given(
    lines=st.lists(index_line(), min_size=1, max_size=12),
    at_start=st.booleans(),
    torn_tail=st.booleans(),
)
def test_any_index_lines_keep_every_session_command_working(lines, at_start, torn_tail):
    tally("index.jsonl lines fuzzed (examples)")
    with tempfile.TemporaryDirectory() as tmp:
        sdir = Path(tmp) / "sessions"
        _make(sdir)
        index = sdir / "index.jsonl"
        junk = b"\n".join(lines) + (b"" if torn_tail else b"\n")
        good = index.read_bytes()
        index.write_bytes(junk + b"\n" + good if at_start else good + junk)
        for _ in lines:
            tally("index.jsonl lines fuzzed (lines)")

        store = SessionStore(sdir)  # a fresh process: nothing cached
        listed = store.list()
        assert sorted(i.key for i in listed) == sorted(KEYS)
        assert all(_well_typed(i) for i in listed)
        assert store.resolve("latest") in KEYS
        for key in KEYS:
            info = store.info(key)
            assert _well_typed(info)
        hits = {i.key for i in store.search("question")}
        assert hits == set(KEYS)

        # The next update of each session shows: no row is frozen by a line it lost to.
        for key in KEYS:
            with store.open(key, create=False) as s:
                s.append({"role": "user", "content": "one more"})
        after = {i.key: i for i in SessionStore(sdir).list()}
        for key in KEYS:
            assert after[key].message_count == _truth(sdir, key), key
        assert all(not math.isnan(float(i.message_count)) for i in after.values())

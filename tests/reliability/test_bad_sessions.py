"""Damaged session files, property-based: garbage lines, wrong-typed messages, lines lost,
duplicated or reordered, truncation of a real file (a sample of cuts; every byte with
`--slow`), huge lines, invalid UTF-8.

For every file: the store opens, lists, searches and exports it without an exception; the
loop resumes it and the conversation it sends is valid (no tool call without its result, no
orphan result, only well-formed messages); the next turn works; and the bytes that were
there are never rewritten (picobot only appends).

tests/core/test_sessions_recovery.py already covers parsing alone (torn tails at every byte,
any bytes never raise); here the damage goes through the whole resume path.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm import scripted
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.core.sessions import SessionStore
from picobot_tui.run.runtime import build_runtime
from tests.reliability.fuzz import fuzz, tally
from tests.reliability.support import conversation_problems
from tests.support.sent import as_stored

KEY = "cli:damaged"


def _settings(tmp: Path) -> Settings:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(tmp / "ws")
    s.tools.approval = "auto"
    # A damaged file may hold a megabyte line, which compaction would summarise with an extra
    # model call; what these tests count is the resumed turns' own requests.
    s.agents.defaults.compaction = "drop"
    return s


async def _make_real_session(tmp: Path) -> bytes:
    """A session written by the real loop: tool rounds, parallel calls, a rename, an
    interrupted answer."""
    (tmp / "ws").mkdir(parents=True, exist_ok=True)
    (tmp / "ws" / "a.txt").write_text("alpha\n")
    model = ScriptedModel(
        [
            scripted.tool_call("read_file", {"path": "a.txt"}, call_id="r1"),
            scripted.text("It says alpha."),
            [
                *scripted.tool_call("list_dir", {"path": "."}, call_id="p1", index=0)[:2],
                *scripted.tool_call("todo", {"action": "add", "text": "x"}, call_id="p2", index=1),
            ],
            scripted.text("Listed ", "and ", "noted."),
        ]
    )
    rt = build_runtime(_settings(tmp), model="scripted", model_client=model)
    store = SessionStore(tmp / "sessions")
    with store.open(KEY, model="scripted") as session:
        for text in ("read a.txt", "list and note"):
            async for _ in rt.loop.run_turn(session, text):
                pass
        session.set_title("A renamed session")
        session.append({"role": "user", "content": 'ünïcödé ✓ and a "quote"'})
        session.append({"role": "assistant", "content": "half an ans", "interrupted": True})
    return (tmp / "sessions" / "cli_damaged.jsonl").read_bytes()


@pytest.fixture(scope="module")
def real_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return asyncio.run(_make_real_session(tmp_path_factory.mktemp("real")))


def test_the_real_file_is_a_tool_heavy_session(real_file: bytes) -> None:
    lines = [json.loads(x) for x in real_file.splitlines()]
    roles = [x.get("role") for x in lines]
    assert roles.count("tool") == 3 and roles.count("user") == 3
    assert sum(1 for x in lines if x.get("tool_calls")) == 2


WEIRD_MESSAGES = [
    {"role": "assistant", "tool_calls": "not a list"},
    {"role": "assistant", "tool_calls": [1, None, "x"]},
    {"role": "assistant", "tool_calls": [{"id": 7, "function": "f"}]},
    {"role": "assistant", "tool_calls": [{"function": {"name": "read_file"}}]},
    {"role": "assistant", "content": None},
    {"role": "assistant", "content": {"text": "a dict"}},
    {"role": "assistant", "content": ["part", {"type": "text", "text": "x"}]},
    {"role": "tool", "tool_call_id": 5, "content": "x"},
    {"role": "tool", "content": None},
    {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
    {"role": "user", "content": 42},
    {"role": "user", "content": None},
    {"role": "user"},
    {"role": "system", "content": ["a", "b"]},
    {"role": "assistant", "content": "x", "ts": 5, "interrupted": "yes"},
    {"_type": "meta", "title": 12, "model": ["x"], "created": None},
    {"_type": "meta", "version": 99},
]
GARBAGE_LINES = st.one_of(
    st.binary(max_size=60),
    st.sampled_from([b"\xff\xfe\xfd", b"\xc3", b"[]", b"null", b"42", b'"str"', b"{", b"}"]),
    st.sampled_from([json.dumps(m).encode() for m in WEIRD_MESSAGES]),
    st.builds(lambda n: b'{"role": "user", "content": "' + b"h" * n + b'"}',
              st.sampled_from([10_000, 300_000, 2_000_000])),
)  # fmt: skip


@st.composite
def damaged(draw: st.DrawFn, real: bytes) -> bytes:
    lines = real.split(b"\n")[:-1]
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["drop", "dup", "swap", "insert", "flip", "cut-line"]))
        if not lines and op != "insert":
            continue
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "insert":
            lines.insert(i, draw(GARBAGE_LINES))
        elif op == "flip" and lines[i]:
            at = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:at] + bytes([draw(st.integers(0, 255))]) + lines[i][at + 1 :]
        elif op == "cut-line":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    data = b"\n".join(lines) + b"\n"
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]  # a torn tail
    return data


def resume(tmp: Path, data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """Put `data` in place as the session, then: list, search, export, and a resumed turn.
    Returns the messages the model was sent and the outcomes of two turns."""
    sdir = tmp / "sessions"
    sdir.mkdir(parents=True, exist_ok=True)
    for p in sdir.iterdir():
        p.unlink()
    path = sdir / "cli_damaged.jsonl"
    path.write_bytes(data)
    store = SessionStore(sdir)
    infos = store.list(unanswered=True)  # damage may leave no answer: listed with --all
    assert [i.key for i in infos] == [KEY]
    list(store.search("alpha"))
    list(store.search("ü"))
    store.export_markdown(KEY)
    store.info(KEY)
    model = ScriptedModel([scripted.text("resumed"), scripted.text("again")])
    rt = build_runtime(_settings(tmp), model="scripted", model_client=model)
    outcomes = []

    async def turns() -> None:
        with store.open(KEY) as session:
            for text in ("go on", "and again"):
                async for event in rt.loop.run_turn(session, text):
                    if event.type == "turn_finished":
                        outcomes.append(event.outcome)

    asyncio.run(turns())
    after = path.read_bytes()
    # Only appended to: whatever was there is still there, byte for byte.
    assert after.startswith(data), "picobot rewrote bytes of the session file"
    sent = [r.messages for r in model.requests]
    assert len(sent) == 2
    return sent[0], outcomes


def assert_valid(sent: list[dict[str, Any]]) -> None:
    assert sent[0]["role"] == "system"
    problems = conversation_problems(sent)
    for m in sent:
        content = m.get("content")
        if not (content is None or isinstance(content, str | list)):
            problems.append(f"content of type {type(content).__name__}: {m}")
        if m["role"] == "tool" and not isinstance(content, str):
            problems.append(f"tool result without text content: {m}")
    assert problems == [], problems


@fuzz(300, 5000)
@given(data=st.data())
def test_any_damage_still_resumes_with_a_valid_conversation(real_file, tmp_path_factory, data):
    tally("session file (mutated) -> open/list/search/export/resume")
    tmp = tmp_path_factory.mktemp("fuzz")
    damaged_bytes = data.draw(damaged(real_file))
    sent, outcomes = resume(tmp, damaged_bytes)
    assert_valid(sent)
    assert as_stored(sent)[-1] == {"role": "user", "content": "go on"}
    assert outcomes == ["final", "final"]


def sample_cuts(data: bytes) -> list[int]:
    """The cuts the default suite tries (~220 of the real file's ~2,300; `--slow` tries
    every byte, ~90 s): at each line's end the four ways a write can stop there (before the
    closing brace, before the newline, just after it, one byte into the next line), every
    byte of the line with multi-byte UTF-8 (a cut inside a character), and every 29th byte
    between (inside keys, values, escapes and nested tool calls, at an offset that moves
    from line to line). Deterministic, so a failure names the same cut every run."""
    cuts = {0, len(data)}
    for i, byte in enumerate(data):
        if byte == ord("\n"):
            cuts.update((i - 1, i, i + 1, i + 2))
    start = 0
    for line in data.split(b"\n"):
        if not line.isascii():
            cuts.update(range(start, start + len(line) + 1))
        start += len(line) + 1
    cuts.update(range(0, len(data), 29))
    return sorted(c for c in cuts if 0 <= c <= len(data))


def check_truncation(real_file: bytes, tmp_path: Path, cuts: list[int]) -> None:
    """Every prefix of a real file cut at `cuts` (what a crash mid-write can leave): the
    complete lines before the cut are all kept and sent, and the conversation is valid."""
    whole = [json.loads(x) for x in real_file.splitlines()]
    for cut in cuts:
        tally("session file truncated at every byte -> resume")
        prefix = real_file[:cut]
        sent, outcomes = resume(tmp_path, prefix)
        assert_valid(sent)
        assert outcomes == ["final", "final"]
        complete = prefix.count(b"\n")
        users = [m["content"] for m in whole[:complete] if m.get("role") == "user"]
        sent_users = [m["content"] for m in as_stored(sent) if m["role"] == "user"]
        assert sent_users[: len(users)] == users, cut


def test_truncation_at_sampled_bytes_resumes_with_a_valid_conversation(real_file, tmp_path):
    """A sample of the cuts (see sample_cuts): every kind of place a cut can fall."""
    cuts = sample_cuts(real_file)
    assert len(cuts) < len(real_file) // 4  # a sample, not every byte again
    check_truncation(real_file, tmp_path, cuts)


@pytest.mark.slow
def test_truncation_at_every_byte_resumes_with_a_valid_conversation(real_file, tmp_path):
    """--slow: every prefix of the real file, byte by byte."""
    check_truncation(real_file, tmp_path, list(range(len(real_file) + 1)))


def test_a_huge_line_and_invalid_utf8(real_file, tmp_path):
    lines = real_file.split(b"\n")
    huge = json.dumps({"role": "user", "content": "x" * 20_000_000}).encode()
    bad = b'{"role": "user", "content": "caf\xe9 in latin-1"}'
    data = b"\n".join([*lines[:3], huge, bad, *lines[3:]])
    tally("session file with a 20 MB line and invalid UTF-8 -> resume")
    sent, outcomes = resume(tmp_path, data)
    assert_valid(sent)
    assert outcomes[-1] == "final"

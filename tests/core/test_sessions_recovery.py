"""Damaged session files: torn tails at every byte, garbage, invalid UTF-8. Never an exception."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from picobot_tui.core.sessions import SessionStore
from picobot_tui.core.sessions.files import parse_session_bytes

MESSAGES = [
    {"role": "user", "content": "list my files, s'il vous plaît ✓"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "list_dir", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a.txt\nb.txt"},
]
NEXT = {"role": "user", "content": "after the crash"}


def strip_ts(msgs: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if k != "ts"} for m in msgs]


@pytest.fixture(scope="module")
def real_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real 3-message session file written by the store."""
    store = SessionStore(tmp_path_factory.mktemp("src") / "sessions")
    with store.open("cli:src", model="m") as s:
        for m in MESSAGES:
            s.append(m)
        return s.path.read_bytes()


def complete_before(data: bytes, n: int) -> int:
    """How many messages are whole (their JSON fully present) in data[:n]."""
    count, start = 0, 0
    for i, line in enumerate(data.split(b"\n")[:-1]):
        end = start + len(line)
        if end <= n and i > 0:  # line 0 is the header
            count += 1
        start = end + 1
    return count


def test_torn_at_every_byte_offset(real_file: bytes, tmp_path: Path) -> None:
    assert real_file.count(b"\n") == 4  # header + 3 messages
    for n in range(len(real_file) + 1):
        sdir = tmp_path / f"cut{n}"
        sdir.mkdir()
        path = sdir / "cli_src.jsonl"
        path.write_bytes(real_file[:n])
        store = SessionStore(sdir)
        want = MESSAGES[: complete_before(real_file, n)]

        assert strip_ts(store.load_messages("cli:src")) == want, n
        tail = real_file[:n].rsplit(b"\n", 1)[-1]
        torn = tail not in real_file.split(b"\n")  # a partial line, not a whole one
        with store.open("cli:src") as s:
            assert strip_ts(s.messages) == want, n
            assert [w for w in s.warnings if "torn last line" in w] == (
                [f"skipped a torn last line ({len(tail)} bytes) in cli_src.jsonl"] if torn else []
            ), n
            assert len(s.warnings) == int(torn), n
            s.append(NEXT)

        # The next append is clean: it loads, on its own line, after what survived.
        data = path.read_bytes()
        assert (
            data.endswith(b"\n") and json.loads(data.splitlines()[-1])["content"] == NEXT["content"]
        )
        with store.open("cli:src") as s:
            assert strip_ts(s.messages) == [*want, NEXT], n
            # The old fragment is now a whole (bad) line of its own, never glued to NEXT.
            assert [w for w in s.warnings if "torn" in w] == [], n
            assert len(s.warnings) == int(torn), (n, s.warnings)
        assert store.info("cli:src").message_count == len(want) + 1


def test_torn_tail_warning_text(real_file: bytes, tmp_path: Path) -> None:
    path = tmp_path / "cli_t.jsonl"
    path.write_bytes(real_file[:-7])
    with SessionStore(tmp_path).open("cli:t") as s:
        assert len(s.messages) == 2
        assert s.warnings == [
            f"skipped a torn last line ({len(real_file.splitlines()[-1]) - 6} bytes) in cli_t.jsonl"
        ]


def test_garbage_and_invalid_utf8_lines_are_skipped(
    real_file: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = real_file.split(b"\n")
    damaged = b"\n".join(
        [
            lines[0],
            b"\xff\xfe\xfa not utf-8 at all",
            lines[1],
            b"{garbage json",
            b'"a string"',
            b"",
            b"   ",
            b'{"no": "role"}',
            b'{"role": "user", "content": "bad \xc3\x28 byte"}',
            lines[2],
            b"\x00" * 50,
            lines[3],
            b"",
        ]
    )
    path = tmp_path / "cli_g.jsonl"
    path.write_bytes(damaged)
    store = SessionStore(tmp_path)
    with caplog.at_level(logging.WARNING, logger="picobot"):
        assert strip_ts(store.load_messages("cli:g")) == MESSAGES
    assert any("invalid UTF-8" in r.message for r in caplog.records)
    with store.open("cli:g") as s:
        assert strip_ts(s.messages) == MESSAGES
        text = "\n".join(s.warnings)
        assert text.count("invalid UTF-8") == 2
        assert "line 4 of cli_g.jsonl: not valid JSON" in text
        assert "not a JSON object" in text and "not a chat message" in text
        assert len(s.warnings) == 6
        s.append(NEXT)
    assert strip_ts(store.load_messages("cli:g")) == [*MESSAGES, NEXT]
    assert store.info("cli:g").message_count == 4


def test_file_without_header_still_opens(tmp_path: Path) -> None:
    (tmp_path / "cli_h.jsonl").write_bytes(b'{"role":"user","content":"orphan"}\n')
    store = SessionStore(tmp_path)
    with store.open("cli:h", model="m") as s:
        assert s.info.title == "orphan" and s.info.model == "m"
        s.append(NEXT)
    assert [m["content"] for m in store.load_messages("cli:h")] == ["orphan", NEXT["content"]]


def test_huge_line(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    big = "x" * 5_000_000
    with store.open("cli:big") as s:
        s.append({"role": "tool", "tool_call_id": "c", "content": big})
    assert store.load_messages("cli:big")[0]["content"] == big


# ------------------------------------------------------------------ property-based

json_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
message = st.builds(
    # A tool result answers a call: one without a tool_call_id is skipped as malformed.
    lambda role, content: (
        {"role": role, "content": content} | ({"tool_call_id": "call_1"} if role == "tool" else {})
    ),
    st.sampled_from(["user", "assistant", "tool", "system"]),
    json_text,
)
junk = st.binary(max_size=60).filter(lambda b: b"\n" not in b)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_parse_never_raises_on_any_bytes(data: bytes) -> None:
    parsed = parse_session_bytes(data, "f.jsonl")
    for m in parsed.messages:
        assert m["role"] in {"user", "assistant", "tool", "system"}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(message, st.lists(junk, max_size=2)), min_size=1, max_size=8),
    junk,
)
def test_valid_lines_survive_any_garbage_between_them(
    items: list[tuple[dict, list[bytes]]], tail: bytes
) -> None:
    out = []
    for m, garbage in items:
        out.append(json.dumps(m, ensure_ascii=False).encode())
        out.extend(garbage)
    data = b"\n".join(out) + b"\n" + tail
    parsed = parse_session_bytes(data, "f.jsonl")
    # Every real message survives, in order. Garbage that happens to be a valid message
    # (say `{"role":"user"}`) may come along too, so check for a subsequence.
    it = iter(parsed.messages)
    assert all(any(m == x for x in it) for m, _ in items), (items, parsed.messages)

"""Bad input on the `--json` channel: garbage, wrong types, unknown session ids, 10 MB lines,
invalid UTF-8, and messages arriving while a turn runs.

In process (many examples): every input line gets at most one `error` event of kind
"protocol" (or "session"), valid messages are queued and run in order, and nothing raises.
Through the console script (one run): the same mix on stdin, the process keeps going,
answers the valid messages in order, and exits 0 at EOF.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from picobot_tui.config.settings import Settings
from picobot_tui.core.llm import scripted
from picobot_tui.core.llm.scripted import ScriptedModel
from picobot_tui.headless.json_protocol import MAX_LINE_BYTES, JsonChannel
from picobot_tui.run.context import Run
from picobot_tui.run.json_lines import split_lines
from picobot_tui.run.runtime import build_runtime
from tests.reliability.fuzz import fuzz, tally
from tests.reliability.support import Proc, Router, write_config
from tests.support.openai_server import OpenAITestServer, slow, text_reply
from tests.support.sent import as_stored

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(), kids, max_size=3)
    ),
    max_leaves=8,
)
session_ids = st.one_of(
    st.none(),
    st.sampled_from(["", "latest", "cli:nope", "bad id!", "../../etc/passwd", "a:b:c", "x" * 300]),
    st.text(max_size=20),
    json_values,
)
messages = st.fixed_dictionaries(
    {"type": st.just("message"), "content": st.one_of(st.text(max_size=30), json_values)},
    optional={"session": session_ids, "extra": json_values},
)
approvals = st.fixed_dictionaries(
    {"type": st.just("approval")},
    optional={"id": st.one_of(st.text(max_size=8), json_values), "decision": json_values},
)
lines = st.one_of(
    st.binary(max_size=80),
    json_values.map(lambda v: json.dumps(v).encode()),
    messages.map(lambda v: json.dumps(v).encode()),
    approvals.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"", b"   ", b"\xff\xfe", b'{"type": "message", "content": "\xc3"}']),
)


def _run(tmp: Path, model: ScriptedModel) -> Run:
    s = Settings()
    s.agents.defaults.model = "scripted"
    s.agents.defaults.workspace = str(tmp / "ws")
    rt = build_runtime(s, model="scripted", model_client=model)
    session = rt.store.open(rt.store.new_key(), model="scripted")
    return Run(s, rt, session, [])


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _valid_message(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("type") == "message"
        and isinstance(obj.get("content"), str)
        and bool(obj["content"].strip())
        and (obj.get("session") is None or isinstance(obj.get("session"), str))
    )


@fuzz(200, 3000)
@given(batch=st.lists(lines, min_size=1, max_size=8))
def test_any_lines_give_errors_or_turns_never_an_exception(tmp_path_factory, batch) -> None:
    tally("--json lines (in process, batches of up to 8)")
    tmp = tmp_path_factory.mktemp("json")
    model = ScriptedModel(default=scripted.text("ok"))
    run = _run(tmp, model)
    out = io.StringIO()
    channel = JsonChannel(out, yes=True)

    async def go() -> None:
        for raw in batch:
            channel.handle_line(raw + b"\n")
        channel.handle_eof()
        await channel.serve(run)

    try:
        asyncio.run(go())
    finally:
        run.session.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in events)
    for e in events:
        if e["type"] == "error":
            assert e["kind"] in ("protocol", "session") and e["message"]
    decoded = []
    for raw in batch:
        try:  # json.dumps writes Infinity for a float too large: not JSON, refused
            decoded.append(json.loads(raw.decode("utf-8"), parse_constant=_not_json))
        except (UnicodeDecodeError, ValueError):
            decoded.append(None)
    queued = [d for d in decoded if _valid_message(d)]
    # Each queued message either ran a turn or was refused for its session id.
    finished = [e for e in events if e["type"] == "turn_finished"]
    session_errors = [e for e in events if e["type"] == "error" and e["kind"] == "session"]
    assert len(finished) + len(session_errors) == len(queued)
    assert all(f["outcome"] == "final" for f in finished)
    # Every other non-blank line gets exactly one protocol error.
    protocol_errors = [e for e in events if e["type"] == "error" and e["kind"] == "protocol"]
    non_blank = sum(1 for raw in batch if raw.strip())
    assert len(protocol_errors) == non_blank - len(queued)


def test_a_bad_session_id_is_an_error_event_not_a_crash(tmp_path) -> None:
    """Regression: a malformed "session" id raised SessionError out of serve()."""
    model = ScriptedModel(default=scripted.text("fine"))
    run = _run(tmp_path, model)
    out = io.StringIO()
    channel = JsonChannel(out, yes=True)
    for obj in (
        {"type": "message", "content": "a", "session": "bad id!"},
        {"type": "message", "content": "b", "session": "cli:does-not-exist"},
        {"type": "message", "content": "c"},
    ):
        channel.handle_line(json.dumps(obj).encode() + b"\n")
    channel.handle_eof()
    try:
        asyncio.run(channel.serve(run))
    finally:
        run.session.close()
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["session", "session"]
    assert "bad id!" in errors[0]["message"]
    assert [e["content"] for e in events if e["type"] == "turn_finished"] == ["fine"]


@fuzz(40, 400)
@given(
    chunks=st.lists(
        st.one_of(
            st.binary(max_size=200),
            st.sampled_from([b"\n", b"\n\n", b'{"type":"message","content":"hi"}\n']),
            st.integers(1, 3).map(lambda n: b"y" * (n * MAX_LINE_BYTES // 2)),
        ),
        max_size=6,
    )
)
def test_reader_splits_lines_and_drops_oversized_ones(chunks) -> None:
    """The stdin reader (`run.json_lines`, shared with `picobot acp`): any byte stream
    becomes the same lines a plain split gives, except that lines longer than the cap become
    one "too long" notice (None) each."""
    tally("--json stdin reader (in process, random byte streams)")
    data = b"".join(chunks)
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as f:
            f.write(data)

    t = threading.Thread(target=feed)
    t.start()
    got = list(split_lines(r, MAX_LINE_BYTES))
    t.join()
    os.close(r)
    expected: list[bytes | None] = []
    parts = data.split(b"\n")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and not part:
            break
        expected.append(None if len(part) > MAX_LINE_BYTES else part)
    assert got == expected


# -- through the console script -------------------------------------------------------------


@pytest.mark.e2e
def test_console_script_survives_bad_lines_and_queues_messages_in_order(tmp_path) -> None:
    router = Router()
    router.add("j", [slow(0.02, text_reply("first answer " * 20, chunk_size=6))])
    with OpenAITestServer(default=router) as server:
        write_config(tmp_path, server.url)
        proc = Proc(tmp_path, ["agent", "--json", "--yes"], stdin=True)
        try:
            proc.send({"type": "message", "content": "j: first"})
            # While the first turn streams: garbage, wrong types, a 10 MB line, bad UTF-8,
            # an approval nobody asked for, and three more messages in quick succession.
            proc.wait_until(lambda: any(e["type"] == "text_delta" for e in proc.events()))
            bad = [
                "not json at all",
                "[1, 2]",
                json.dumps({"type": 5}),
                json.dumps({"type": "message", "content": 5}),
                json.dumps({"type": "message", "content": "   "}),
                json.dumps({"type": "message", "content": "x", "session": ["no"]}),
                json.dumps({"type": "approval", "id": "nobody", "decision": "allow"}),
                json.dumps({"type": "message", "content": "z" * (10 * 1024 * 1024)}),
            ]
            for line in bad:
                proc.send(line)
            assert proc.popen.stdin is not None
            proc.popen.stdin.write(b'{"type": "message", "content": "\xff"}\n')
            for i in range(2, 5):
                proc.send({"type": "message", "content": f"j: message {i}"})
            proc.close_stdin()
            code = proc.finish(timeout=120)
        finally:
            if proc.popen.poll() is None:
                proc.popen.kill()
                proc.finish()
    tally("--json lines (subprocess)")
    assert code == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    events = proc.events()
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == len(bad) + 1 and all(e["kind"] == "protocol" for e in errors)
    assert any("longer than" in e["message"] for e in errors)
    finished = [e for e in events if e["type"] == "turn_finished"]
    assert [f["outcome"] for f in finished] == ["final"] * 4
    assert finished[0]["content"].startswith("first answer")
    # The queued messages ran after the first turn, in the order they were sent.
    sent_users = [
        [m["content"] for m in as_stored(body["messages"]) if m["role"] == "user"]
        for body in router.of("j")
    ]
    assert sent_users[-1] == ["j: first", "j: message 2", "j: message 3", "j: message 4"]
    assert [len(u) for u in sent_users] == [1, 2, 3, 4]


@pytest.mark.e2e
def test_console_script_answers_hostile_json_with_protocol_errors_and_keeps_serving(
    tmp_path,
) -> None:
    """Issue 21 point 4: one line of `[[[[…` (400 KB) printed a RecursionError traceback
    and no `error` event; a 100,000-digit number raised a bare ValueError the same way. Each
    hostile line is now one `protocol` error, and the messages after them are answered."""
    hostile = [
        b"[" * 400_000,
        b'{"type": "message", "content": "x", "n": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",
        b'{"type": "message", "content": "x", "n": ' + b"9" * 100_000 + b"}",
        b'{"type": "message", "content": "x", "n": NaN}',
        b'{"type": "message", "content": "x", "n": 1e400}',
        b'{"type": "approval", "id": "never-asked", "decision": "allow"}',
    ]
    with OpenAITestServer(default=text_reply("fine")) as server:
        write_config(tmp_path, server.url)
        proc = Proc(tmp_path, ["agent", "--json", "--yes"], stdin=True)
        try:
            assert proc.popen.stdin is not None
            for line in hostile:
                proc.popen.stdin.write(line + b"\n")
            # a lone surrogate in a message is taken (as U+FFFD), and answered
            proc.popen.stdin.write(b'{"type": "message", "content": "hello \\ud800"}\n')
            proc.popen.stdin.flush()
            proc.close_stdin()
            code = proc.finish(timeout=120)
        finally:
            if proc.popen.poll() is None:
                proc.popen.kill()
                proc.finish()
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert code == 0, proc.stderr
    events = proc.events()
    errors = [e for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["protocol"] * len(hostile)
    said = [e["message"] for e in errors]
    assert "nested more than 128 levels deep" in said[0] and "nested" in said[1]
    assert "digits" in said[2] and "NaN" in said[3] and "too large" in said[4]
    assert "never-asked" in said[5]
    finished = [e for e in events if e["type"] == "turn_finished"]
    assert [f["outcome"] for f in finished] == ["final"]
    assert "hello \ufffd" in json.dumps(server.last_body, ensure_ascii=False)

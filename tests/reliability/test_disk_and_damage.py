"""A full disk, undecodable input, damaged session lines and a bad workspace, each through
the real `picobot` console script against the local test server (issue 10, points 13-19).

The full disk is real: PICOBOT_HOME is a 512 KiB tmpfs (`mount -t tmpfs -o size=…`, so
these tests need root or CAP_SYS_ADMIN and are skipped without it), filled up to the last
block by a filler file, at start or from inside the server while a turn is running (ENOSPC).
The same failures are also provoked without root by RLIMIT_FSIZE in the child (EFBIG).
The run that fails is always the console script; the resume that follows a failure runs
the same Typer command in this process (`resume()`), to save a LiteLLM import.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.headless.conftest import home_workspace
from tests.reliability import fuzz
from tests.reliability.support import (
    KEY,
    Proc,
    check_session_file,
    conversation_problems,
    saved_logging,
    session_paths,
    write_config,
)
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply
from tests.support.sent import as_stored

pytestmark = pytest.mark.e2e

FILLER = "filler.bin"


# -- a disk that fills up ------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs, unmounted afterwards."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk: Path) -> None:
    """Write a filler file until the disk refuses (ENOSPC): no block is left."""
    with open(disk / FILLER, "ab", buffering=0) as f:
        block = b"\0" * 4096
        while True:
            try:
                f.write(block)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                return


def free(disk: Path) -> None:
    (disk / FILLER).unlink()


def session_files_in(home: Path) -> list[Path]:
    return [p for p in (home / "sessions").glob("*") if p.name.startswith("cli_")]


def run(
    home: Path, *args: str, stdin: str | bytes | None = None, max_file_size: int | None = None
) -> subprocess.CompletedProcess:
    """The console script. `max_file_size`: RLIMIT_FSIZE in the child (a write past it
    fails with EFBIG, SIGXFSZ ignored): a size limit any user can set, no mount needed."""
    from tests.headless.conftest import cli_env, home_workspace, picobot_exe

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_size, max_file_size))

    return subprocess.run(
        [*picobot_exe(), *args],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=cli_env(home, OPENAI_API_KEY=KEY),
        cwd=home_workspace(home),
        timeout=120,
        preexec_fn=limit if max_file_size is not None else None,
    )


def text(done: subprocess.CompletedProcess) -> tuple[str, str]:
    return done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def resume(
    home: Path, key: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """`picobot agent --session KEY -m MESSAGE` in this process, through the same Typer
    command the console script runs: (exit code, stdout, stderr). The run that failed on
    the disk is the console script; the resume after it only shows the session is whole,
    and a second console script would pay LiteLLM's import again (~4 s of CPU; the pytest
    process imports it once). tests/reliability/test_crash.py resumes the same way."""
    from typer.testing import CliRunner

    from picobot_tui.cli import app

    with monkeypatch.context() as m, saved_logging():
        m.setenv("PICOBOT_HOME", str(home))
        m.setenv("OPENAI_API_KEY", KEY)
        m.chdir(home_workspace(home) or Path.cwd())
        done = CliRunner().invoke(app, ["agent", "--session", key, "-m", message])
    return done.exit_code, done.stdout, done.stderr


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAITestServer) -> Iterator[OpenAITestServer]:
    server.script([])
    server.clear()
    yield server
    server.script([])


# -- 13 + 19: full disk at start -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["-m", "--json"])
def test_full_disk_at_start_is_a_clear_error_and_leaves_no_session(small_disk, srv, mode):
    home = small_disk
    write_config(home, srv.url)
    (home / "workspace").mkdir()
    fill(home)
    done = (
        run(home, "agent", "-m", "hello")
        if mode == "-m"
        else run(home, "agent", "--json", stdin=json.dumps({"type": "message", "content": "hi"}))
    )
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert "No space left on device" in err
    assert str(home / "sessions") in err  # names the path
    assert srv.completions == []
    assert session_files_in(home) == []  # no empty session, no stray lock file
    free(home)
    listing = run(home, "sessions", "list")
    assert listing.returncode == 0 and b"cli:" not in listing.stdout, listing


def test_full_disk_when_resuming_keeps_the_session_intact(small_disk, srv):
    """The pid write of the lock fails on a full disk: a clear error, and the session
    being resumed is left exactly as it was (only a new session is ever removed)."""
    home = small_disk
    write_config(home, srv.url)
    # The session to resume comes from the offline demo model: making it is not the point,
    # and the demo skips LiteLLM's import (~4.5 s of CPU a run).
    assert run(home, "agent", "--model", "demo", "-m", "first").returncode == 0
    [path] = session_paths(home)
    before = path.read_bytes()
    stored = check_session_file(path, lock=False)
    key = stored.key
    fill(home)
    done = run(home, "agent", "--session", key, "-m", "second")
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "No space left on device" in err, err
    assert str(home / "sessions") in err
    assert path.read_bytes() == before
    free(home)
    after = check_session_file(path).messages
    assert [m["role"] for m in after] == ["user", "assistant", "tool", "assistant"]
    assert after[0]["content"] == "first" and after == stored.messages


# -- 13 + 19: the same with a file size limit (no root needed) -------------------------------


def test_a_size_limit_at_start_is_a_clear_error_and_leaves_no_session(picobot_home, srv):
    write_config(picobot_home, srv.url)
    (picobot_home / "workspace").mkdir(exist_ok=True)
    done = run(picobot_home, "agent", "-m", "hello", max_file_size=0)
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert "File too large" in err and str(picobot_home / "sessions") in err
    assert session_files_in(picobot_home) == []


def test_a_size_limit_mid_turn_keeps_what_was_saved(picobot_home, srv, monkeypatch):
    """The question fits under the limit, the long answer does not."""
    write_config(picobot_home, srv.url)
    srv.script([text_reply("a long answer " * 400)])
    done = run(picobot_home, "agent", "-m", "short question", max_file_size=1500)
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert "could not save to session" in err and "File too large" in err
    found = _check_readable(picobot_home, "short question", ["user"])
    srv.script([text_reply("resumed")])
    code, out, err = resume(picobot_home, found["key"], "again", monkeypatch)
    assert code == 0 and out == "resumed\n", (out, err)


# -- 13: full disk in the middle of a turn ---------------------------------------------------


def _fill_then(disk: Path, reply: Any):
    def step(body: dict[str, Any]) -> Any:
        fill(disk)  # the user message is stored by now; the answer will not fit
        return reply

    return step


def _check_readable(home: Path, expect_user: str, roles: list[str]) -> dict[str, Any]:
    """The session opens with no damage but a torn tail, and holds exactly `roles`."""
    [path] = session_paths(home)
    check = check_session_file(path)
    assert check.damaged == [], check.damaged
    assert [m["content"] for m in check.messages if m["role"] == "user"] == [expect_user]
    assert [m["role"] for m in check.messages] == roles
    return {"key": check.key, "path": path}


def test_full_disk_mid_turn_in_m_mode_keeps_what_was_saved(small_disk, srv, monkeypatch):
    home = small_disk
    write_config(home, srv.url)
    srv.script([_fill_then(home, text_reply("an answer that will not fit " * 200))])
    done = run(home, "agent", "-m", "first question")
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert "could not save to session" in err and "No space left on device" in err
    [path] = session_paths(home)
    assert str(path) in err
    free(home)
    found = _check_readable(home, "first question", ["user"])
    # The session resumes, with the stored question in the request.
    srv.script([text_reply("resumed")])
    code, out, err = resume(home, found["key"], "second", monkeypatch)
    assert code == 0, (out, err)
    assert out == "resumed\n"
    sent = [m for m in as_stored(srv.last_body["messages"]) if m["role"] == "user"]
    assert [m["content"] for m in sent] == ["first question", "second"]


def test_full_disk_during_a_tool_round_keeps_the_pairs_consistent(small_disk, srv, monkeypatch):
    """The disk fills while a tool runs: the call is stored, its result cannot be. The
    resumed session gets a stand-in result (no orphan call reaches the provider)."""
    home = small_disk
    write_config(home, srv.url)
    (home / "workspace").mkdir()
    # The call is small and fits in the session file's last page; the result (a long
    # file, cut to tool_result_max_chars) does not.
    lines = "".join(f"line {i}: alpha beta gamma delta\n" for i in range(3000))
    (home / "workspace" / "a.txt").write_text(lines)
    srv.script([_fill_then(home, tool_call_reply("read_file", {"path": "a.txt"}))])
    done = run(home, "agent", "-m", "read it")
    out, err = text(done)
    assert done.returncode == 1, err
    assert "Traceback" not in err and "No space left on device" in err, err
    free(home)
    # The call was stored before the disk filled, its result could not be.
    found = _check_readable(home, "read it", ["user", "assistant"])
    srv.script([text_reply("ok")])
    code, out, err = resume(home, found["key"], "again", monkeypatch)
    assert code == 0, (out, err)
    sent = srv.last_body["messages"][1:]
    assert conversation_problems(sent) == []
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]


def test_full_disk_mid_turn_in_json_mode_ends_the_channel_with_exit_1(small_disk, srv):
    home = small_disk
    write_config(home, srv.url)
    srv.script([_fill_then(home, text_reply("a long answer " * 300))])
    p = Proc(home, ["agent", "--json"], stdin=True, OPENAI_API_KEY=KEY)
    p.send({"type": "message", "content": "first"})
    p.send({"type": "message", "content": "never run"})
    code = p.finish(timeout=120)
    assert code == 1, p.stderr
    assert "Traceback" not in p.stderr and "Logging error" not in p.stderr, p.stderr
    events = p.events()
    errors = [e for e in events if e["type"] == "error"]
    assert [e["kind"] for e in errors] == ["storage"], events
    assert "No space left on device" in errors[0]["message"]
    assert str(session_paths(home)[0]) in errors[0]["message"]
    assert len(srv.completions) == 1  # the queued message did not run on a full disk
    free(home)
    _check_readable(home, "first", ["user"])


# -- 15: undecodable bytes in argv -----------------------------------------------------------


def test_non_utf8_argv_is_repaired_and_the_session_keeps_working(picobot_home, srv, monkeypatch):
    write_config(picobot_home, srv.url)
    srv.script([text_reply("one"), text_reply("two")])
    done = run(picobot_home, "agent", "-m", os.fsdecode(b"caf\xe9 au lait"))
    out, err = text(done)
    assert done.returncode == 0, err
    assert out == "one\n"
    assert as_stored(srv.last_body["messages"])[-1] == {
        "role": "user",
        "content": "caf\ufffd au lait",
    }
    [path] = session_paths(picobot_home)
    assert "caf\ufffd au lait" in path.read_text(encoding="utf-8")
    key = check_session_file(path).key
    code, out, err = resume(picobot_home, key, "next", monkeypatch)
    assert code == 0, (out, err)
    assert out == "two\n"


def test_json_messages_with_lone_surrogates_are_repaired(picobot_home, srv):
    """Over --json, a JSON-escaped lone surrogate is repaired like argv's; raw invalid
    UTF-8 in a line is refused as a protocol error (never stored)."""
    write_config(picobot_home, srv.url)
    srv.script([text_reply("one"), text_reply("two")])
    lines = [
        b'{"type": "message", "content": "caf\\udce9 escaped"}',
        b'{"type": "message", "content": "caf\xe9 raw"}',
        b'{"type": "message", "content": "then plain"}',
    ]
    done = run(picobot_home, "agent", "--json", stdin=b"\n".join(lines) + b"\n")
    out, err = text(done)
    assert done.returncode == 0, err
    events = [json.loads(x) for x in out.splitlines()]
    assert [e["kind"] for e in events if e["type"] == "error"] == ["protocol"]
    finished = [e["content"] for e in events if e["type"] == "turn_finished"]
    assert finished == ["one", "two"]
    sent = [m["content"] for m in as_stored(srv.last_body["messages"]) if m["role"] == "user"]
    assert sent == ["caf\ufffd escaped", "then plain"]


def test_a_session_damaged_by_an_older_picobot_resumes(picobot_home, srv):
    """A file holding the JSON escape of a lone surrogate (what older picobots stored for
    `-m $'caf\\xe9'`): it used to fail every turn as "HTTP 500"."""
    write_config(picobot_home, srv.url)
    sessions = picobot_home / "sessions"
    sessions.mkdir(mode=0o700)
    key = "cli:0ld0ld00-20260101-000000"
    lines = [
        {"_type": "meta", "version": 1, "key": key, "created": "2026-01-01T00:00:00.000000Z"},
        {"role": "user", "content": "caf\\udce9", "ts": "2026-01-01T00:00:01.000000Z"},
    ]
    raw = "\n".join(json.dumps(x).replace("\\\\udce9", "\\udce9") for x in lines) + "\n"
    assert "\\udce9" in raw and "\\\\udce9" not in raw
    (sessions / "cli_0ld0ld00-20260101-000000.jsonl").write_text(raw)
    srv.script([text_reply("fine")])
    done = run(picobot_home, "agent", "--session", key, "-m", "hello")
    assert done.returncode == 0, text(done)
    sent = as_stored(srv.last_body["messages"])
    assert [m["content"] for m in sent if m["role"] == "user"] == ["caf\ufffd", "hello"]


# -- 17: damaged lines are not sent ----------------------------------------------------------

TS = "2026-01-01T00:00:0{}.000000Z"


def _call(cid: Any = "c1", name: Any = "read_file", args: Any = "{}", **extra: Any) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}, **extra}


DAMAGED: dict[str, list[dict[str, Any]]] = {
    "user content 5": [{"role": "user", "content": 5}],
    "user content null": [{"role": "user", "content": None}],
    "user content object": [{"role": "user", "content": {"text": "x"}}],
    "user content NaN": [{"role": "user", "content": float("nan")}],
    "part without type": [{"role": "user", "content": [{"text": "x"}]}],
    "text part with a number": [{"role": "user", "content": [{"type": "text", "text": 5}]}],
    "bare string part": [{"role": "user", "content": ["x"]}],
    "name is an object": [{"role": "user", "content": "x", "name": {"a": 1}}],
    "role unknown": [{"role": "robot", "content": "x"}],
    "role a number": [{"role": 3, "content": "x"}],
    "tool call name an object": [
        {"role": "assistant", "content": None, "tool_calls": [_call(name={"x": 1})]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "tool call name empty": [
        {"role": "assistant", "content": None, "tool_calls": [_call(name="")]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "tool call id a number": [
        {"role": "assistant", "content": None, "tool_calls": [_call(cid=7)]},
        {"role": "tool", "tool_call_id": "7", "name": "read_file", "content": "result"},
    ],
    "tool call arguments an object": [
        {"role": "assistant", "content": None, "tool_calls": [_call(args={"path": "a"})]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "tool call type not function": [
        {"role": "assistant", "content": None, "tool_calls": [_call(type="magic")]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "function a string": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": "f"}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "tool_calls an object": [
        {"role": "assistant", "content": None, "tool_calls": {"id": "c1"}},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "duplicate call ids": [
        {"role": "assistant", "content": None, "tool_calls": [_call(), _call()]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "result"},
    ],
    "assistant content a number": [{"role": "assistant", "content": 5}],
    "tool result content 5": [
        {"role": "assistant", "content": None, "tool_calls": [_call()]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": 5},
    ],
    "tool result id a number": [
        {"role": "assistant", "content": None, "tool_calls": [_call()]},
        {"role": "tool", "tool_call_id": 1, "name": "read_file", "content": "r"},
    ],
    "tool result name an object": [
        {"role": "assistant", "content": None, "tool_calls": [_call()]},
        {"role": "tool", "tool_call_id": "c1", "name": {"n": 1}, "content": "r"},
    ],
}
RAW_DAMAGE = {
    "not JSON": b'{"role": "user", "content": "x"',
    "invalid UTF-8": b'{"role": "user", "content": "caf\xe9"}',
    "a JSON array": b'[{"role": "user", "content": "x"}]',
    "nested 100,000 deep": b'{"role": "user", "content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


def _lines_for(kind: str, n: int) -> list[bytes]:
    if kind in RAW_DAMAGE:
        return [RAW_DAMAGE[kind]]
    # Each block its own call id, so one file can hold every kind.
    return [json.dumps(m).replace('"c1"', f'"c{n}"').encode() for m in DAMAGED[kind]]


def _bad_line(kind: str) -> int:
    """Which line of the block is damaged (the others are valid)."""
    return 1 if kind.startswith("tool result") else 0


def _valid_message(m: dict[str, Any]) -> bool:
    """What a provider takes: content text (or null next to tool calls), string names."""
    if m["role"] not in ("system", "user", "assistant", "tool"):
        return False
    if "name" in m and not isinstance(m["name"], str):
        return False
    if m["role"] == "assistant" and m.get("tool_calls"):
        return all(
            isinstance(c["id"], str)
            and isinstance(c["function"]["name"], str)
            and isinstance(c["function"]["arguments"], str)
            for c in m["tool_calls"]
        )
    if m["role"] == "tool" and not isinstance(m.get("tool_call_id"), str):
        return False
    return isinstance(m.get("content"), str)


def test_damaged_lines_are_skipped_with_a_warning_and_never_sent(picobot_home, srv):
    """One file holds every kind of damage, between good messages; it is resumed with
    `--session ID -m`. Each damaged line gets a warning naming it, and the request holds
    only valid messages, in order, with every tool call answered."""
    write_config(picobot_home, srv.url)
    sessions = picobot_home / "sessions"
    sessions.mkdir(mode=0o700)
    key = "cli:damage00-20260101-000000"
    head = [
        {"_type": "meta", "version": 1, "key": key, "created": TS.format(0)},
        {"role": "user", "content": "before", "ts": TS.format(1)},
        {"role": "assistant", "content": "fine", "ts": TS.format(2)},
    ]
    body = [json.dumps(x).encode() for x in head]
    expected_warnings = []
    for n, kind in enumerate([*DAMAGED, *RAW_DAMAGE], start=1):
        lines = _lines_for(kind, n)
        expected_warnings.append((kind, len(body) + _bad_line(kind) + 1))
        body += lines
    tail = [
        {"role": "user", "content": "after", "ts": TS.format(3)},
        {"role": "assistant", "content": "still fine", "ts": TS.format(4)},
    ]
    body += [json.dumps(x).encode() for x in tail]
    (sessions / "cli_damage00-20260101-000000.jsonl").write_bytes(b"\n".join(body) + b"\n")
    srv.script([text_reply("resumed")])
    done = run(picobot_home, "agent", "--session", key, "-m", "now", "--logs")
    out, err = text(done)
    assert done.returncode == 0, err
    assert "Traceback" not in err and out == "resumed\n"
    for kind, lineno in expected_warnings:
        assert f"skipped line {lineno} of" in err, kind
    sent = srv.last_body["messages"][1:]  # after the system prompt
    assert all(_valid_message(m) for m in sent), sent
    assert conversation_problems(sent) == []
    plain = [
        m["content"]
        for m in as_stored(sent)
        if m["role"] in ("user", "assistant") and not m.get("tool_calls")
    ]
    assert plain == ["before", "fine", "after", "still fine", "now"]
    # Only the assistant messages of the "tool result" kinds were valid: each is answered
    # by a stand-in result, and every other call of the file is gone with its results.
    kept_calls = [c["id"] for m in sent for c in m.get("tool_calls") or ()]
    tool_result_kinds = [k for k in DAMAGED if k.startswith("tool result")]
    assert len(kept_calls) == len(tool_result_kinds)
    fuzz.NOTES.append(
        f"damaged session lines: {len(DAMAGED) + len(RAW_DAMAGE)} kinds in one file, "
        f"{len(expected_warnings)} warned and skipped, 0 sent"
    )


# -- 16: one bad index line ------------------------------------------------------------------

BAD_INDEX_FIELDS = {
    "message_count a string": {"message_count": "x"},
    "message_count NaN": {"message_count": float("nan")},
    "message_count negative": {"message_count": -1},
    "message_count true": {"message_count": True},
    "updated a number": {"updated": 5},
    "updated not a timestamp": {"updated": "yesterday"},
    "created a list": {"created": [1]},
    "title an object": {"title": {"a": 1}},
    "auto_title a number": {"auto_title": 3},
    "model a number": {"model": 7},
    "size huge": {"size": 10**15 * 9},
    "size larger than the file": {"size": 99_999_999, "message_count": 77},
    "size a float": {"size": 1e400},
    "deleted a string": {"deleted": "yes"},
    "key malformed": {"key": "no spaces allowed"},
}


def _two_sessions(home: Path, srv: OpenAITestServer) -> list[str]:
    """Two sessions of 4 messages each (the demo's question, tool call, result, answer): the
    offline demo model makes them without LiteLLM's import (~4.5 s of CPU a run); these
    tests are about the index, not the provider."""
    write_config(home, srv.url)
    for msg in ("alpha question", "beta question"):
        assert run(home, "agent", "--model", "demo", "-m", msg).returncode == 0
    keys = [check_session_file(p, lock=False).key for p in session_paths(home)]
    return keys


def _list(home: Path) -> list[dict[str, Any]]:
    done = run(home, "sessions", "list", "--json")
    assert done.returncode == 0 and b"Traceback" not in done.stderr, text(done)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_bad_index_lines_are_ignored_by_every_session_command(picobot_home, srv):
    keys = _two_sessions(picobot_home, srv)
    index = picobot_home / "sessions" / "index.jsonl"
    truth = {e["key"]: e for e in _list(picobot_home)}
    good = index.read_bytes()
    target = sorted(keys)[0]
    for name, fields in BAD_INDEX_FIELDS.items():
        line = {"key": target, **fields}
        index.write_bytes(good + json.dumps(line).encode() + b"\n")
        listing = _list(picobot_home)
        got = {e["key"]: e for e in listing}
        assert got == truth, name
        for args in (["sessions", "show", target], ["sessions", "search", "question"]):
            done = run(picobot_home, *args)
            assert done.returncode == 0, (name, args, text(done))
            assert b"Traceback" not in done.stderr
        # The offline demo model: `latest` is resolved the same, without LiteLLM's import.
        done = run(picobot_home, "agent", "--model", "demo", "--session", "latest", "-m", "x")
        assert done.returncode == 0 and b"Traceback" not in done.stderr, (name, text(done))
        truth = {e["key"]: e for e in _list(picobot_home)}
        good = index.read_bytes()
    fuzz.NOTES.append(
        f"index.jsonl: {len(BAD_INDEX_FIELDS)} bad-line kinds x 4 commands "
        "(sessions list/show/search, --session latest) through the console script, 0 failed"
    )


def test_a_huge_size_no_longer_freezes_the_listing(picobot_home, srv):
    """A size no file has: every later update used to lose against it (a frozen row)."""
    keys = _two_sessions(picobot_home, srv)
    index = picobot_home / "sessions" / "index.jsonl"
    target = sorted(keys)[0]
    with open(index, "ab") as f:
        f.write(json.dumps({"key": target, "size": 10**12, "message_count": 999}).encode())
        f.write(b"\n")
    before = {e["key"]: e for e in _list(picobot_home)}
    assert before[target]["message_count"] == 4
    done = run(picobot_home, "agent", "--model", "demo", "--session", target, "-m", "grow")
    assert done.returncode == 0, text(done)
    after = {e["key"]: e for e in _list(picobot_home)}
    assert after[target]["message_count"] == 8


# -- 18 + 19: a workspace that cannot be created ---------------------------------------------


def _workspaces(tmp: Path) -> dict[str, Path]:
    a_file = tmp / "a-file"
    a_file.write_text("x")
    return {
        "under /proc": Path("/proc/picobot-nope/ws"),
        "under a file": a_file / "ws",
        "a file": a_file,
        "a dangling link": _dangling(tmp),
    }


def _dangling(tmp: Path) -> Path:
    link = tmp / "dangling"
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    link.symlink_to(tmp / "a-file" / "nowhere")
    return link


@pytest.mark.parametrize("mode", ["-m", "--json"])
def test_a_workspace_that_cannot_be_created_is_a_usage_error(picobot_home, tmp_path, srv, mode):
    write_config(picobot_home, srv.url)
    for name, ws in _workspaces(tmp_path).items():
        if mode == "-m":
            done = run(picobot_home, "agent", "--workspace", str(ws), "-m", "hi")
        else:
            line = json.dumps({"type": "message", "content": "hi"})
            done = run(picobot_home, "agent", "--json", "--workspace", str(ws), stdin=line)
        out, err = text(done)
        assert done.returncode == 2, (name, err)
        assert "Traceback" not in err, (name, err)
        assert "workspace" in err and str(ws.resolve()) in err, (name, err)
        assert session_files_in(picobot_home) == [], name  # 19: nothing left behind
    assert srv.completions == []


# -- 19: an idle --json leaves no session ----------------------------------------------------


def test_json_eof_before_any_message_creates_no_session(picobot_home, srv):
    write_config(picobot_home, srv.url)
    done = run(picobot_home, "agent", "--json", stdin="")
    assert done.returncode == 0, text(done)
    assert session_files_in(picobot_home) == []
    assert b"cli:" not in run(picobot_home, "sessions", "list").stdout

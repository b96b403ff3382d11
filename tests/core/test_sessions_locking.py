"""Locking and concurrency across real processes (flock is per open file, so in-process
tests would prove nothing)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from picobot_tui.core.sessions import SessionLocked, SessionStore

ROOT = Path(__file__).resolve().parents[2]

HOLDER = """
import sys
from pathlib import Path
from picobot_tui.core.sessions import SessionStore
store = SessionStore(Path(sys.argv[1]))
s = store.open(sys.argv[2])
s.append({"role": "user", "content": "held"})
print("held", flush=True)
sys.stdin.readline()  # until told to go (or killed)
s.close()
print("closed", flush=True)
sys.stdin.readline()
"""

TRY_OPEN = """
import sys
from pathlib import Path
from picobot_tui.core.sessions import SessionLocked, SessionStore
store = SessionStore(Path(sys.argv[1]))
try:
    with store.open(sys.argv[2]) as s:
        s.append({"role": "user", "content": "from the second process"})
except SessionLocked as e:
    print(e)
    sys.exit(3)
print("opened")
"""


def run_py(code: str, *args: str, **kw) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        **kw,
    )


def try_open(sdir: Path, key: str) -> tuple[int, str]:
    p = run_py(TRY_OPEN, str(sdir), key)
    out, err = p.communicate(timeout=60)
    assert not err or p.returncode in (0, 3), err
    return p.returncode, out.strip()


@pytest.fixture
def sdir(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def test_second_process_is_refused_then_admitted(sdir: Path) -> None:
    store = SessionStore(sdir)
    s = store.open("cli:shared")
    s.append({"role": "user", "content": "first"})
    code, out = try_open(sdir, "cli:shared")
    assert code == 3
    assert out == (
        f"session cli:shared is in use by another picobot process (pid {os.getpid()}); "
        "finish there, or start a new session"
    )
    s.close()
    code, out = try_open(sdir, "cli:shared")
    assert (code, out) == (0, "opened")
    assert [m["content"] for m in store.load_messages("cli:shared")] == [
        "first",
        "from the second process",
    ]


def test_lock_held_by_a_child_names_its_pid_and_is_freed_on_close(sdir: Path) -> None:
    holder = run_py(HOLDER, str(sdir), "cli:h")
    try:
        assert holder.stdout.readline().strip() == "held"
        store = SessionStore(sdir)
        with pytest.raises(
            SessionLocked, match=rf"in use by another picobot process \(pid {holder.pid}\)"
        ):
            store.open("cli:h")
        with pytest.raises(SessionLocked):
            store.rename("cli:h", "x")
        with pytest.raises(SessionLocked):
            store.delete("cli:h")
        assert store.load_messages("cli:h")[0]["content"] == "held"  # reading needs no lock
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "closed"
        with store.open("cli:h") as s:
            assert len(s.messages) == 1
    finally:
        holder.kill()
        holder.wait()


def test_lock_is_freed_when_the_holder_is_killed(sdir: Path) -> None:
    holder = run_py(HOLDER, str(sdir), "cli:k")
    try:
        assert holder.stdout.readline().strip() == "held"
        store = SessionStore(sdir)
        with pytest.raises(SessionLocked):
            store.open("cli:k")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with store.open("cli:k") as s:
        assert [m["content"] for m in s.messages] == ["held"]
        s.append({"role": "assistant", "content": "after"})


WRITER = """
import sys
from pathlib import Path
from picobot_tui.core.sessions import SessionStore
store = SessionStore(Path(sys.argv[1]))
tag, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    with store.open(f"cli:{tag}-{i}") as s:
        for j in range(5):
            s.append({"role": "user", "content": f"{tag} {i} {j} " + "x" * 200})
    if i % 7 == 0:
        store.list(unanswered=True)  # compactions race with the other writers' appends
print("done")
"""


def test_concurrent_writers_keep_the_index_consistent(sdir: Path) -> None:
    procs = [run_py(WRITER, str(sdir), f"w{k}", "40") for k in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert out.strip() == "done", err
    store = SessionStore(sdir)
    # The index, read as it is, already knows every session and its final count.
    entries = store._index.read() or {}
    keys = {f"cli:w{k}-{i}" for k in range(4) for i in range(40)}
    assert set(entries) == keys
    assert all(entries[k]["message_count"] == 5 for k in keys)
    infos = store.list(unanswered=True)
    assert len(infos) == 160 and all(i.message_count == 5 for i in infos)
    for line in store._index.path.read_bytes().splitlines():
        json.loads(line)  # every line whole


APPENDER = """
import sys
from pathlib import Path
from picobot_tui.core.sessions import SessionStore
store = SessionStore(Path(sys.argv[1]))
with store.open("cli:crash") as s:
    print("open", flush=True)
    i = len(s.messages)
    while True:
        s.append({"role": "user", "content": f"message {i} " + "y" * (i * 37 % 5000)})
        i += 1
"""


def test_sigkill_during_appends_loses_nothing_complete(sdir: Path) -> None:
    store = SessionStore(sdir)
    for round_ in range(3):
        p = run_py(APPENDER, str(sdir))
        assert p.stdout.readline().strip() == "open"
        size = store._path("cli:crash").stat().st_size
        while store._path("cli:crash").stat().st_size < size + 200_000:
            assert p.poll() is None, p.stderr.read()  # let it append a while, then kill it
        p.send_signal(signal.SIGKILL)
        p.wait()
        with store.open("cli:crash") as s:
            contents = [m["content"].split()[1] for m in s.messages]
            assert contents == [str(i) for i in range(len(contents))], round_
            s.append({"role": "assistant", "content": f"message {len(contents)} resumed"})
    msgs = store.load_messages("cli:crash")
    assert [m["content"].split()[1] for m in msgs] == [str(i) for i in range(len(msgs))]

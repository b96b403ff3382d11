"""The server through the real console script: a call answered warm, control commands,
the log, the socket's modes, and the policy switches."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.headless.conftest import home_workspace
from tests.server.support import DEADLINE, Rig, wait_for
from tests.support.openai_server import OpenAITestServer, text_reply

HOLD = str(Path(__file__).parents[1] / "support" / "hold_litellm")

pytestmark = pytest.mark.e2e


def test_a_call_is_answered_warm_and_status_shows_it(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    status = rig.start(configured_home)
    assert status["served"] == 0 and status["rss_kib"] > 50_000
    llm_server.script([text_reply("warm hello", usage=(5, 2))])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream")
    assert (res.returncode, res.stdout) == (0, "warm hello\n"), res.stderr
    assert rig.served() == 1
    [sock] = rig.sockets()
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    shown = rig.run(configured_home, "server", "status")
    assert shown.returncode == 0
    for field in ("pid", "rss", "stamp", "uptime", "(current)"):
        assert field in shown.stdout
    log = (configured_home / "data/logs/server.log").read_text()
    assert "ready:" in log
    assert rig.run(configured_home, "server", "stop").returncode == 0
    assert rig.sockets() == []
    gone = rig.run(configured_home, "server", "status")
    assert gone.returncode == 1 and "no server running" in gone.stdout


def test_a_cold_call_starts_a_server_for_the_next(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    llm_server.script([text_reply("one"), text_reply("two"), text_reply("three")])
    first = rig.run(configured_home, "agent", "-m", "hi", "--no-stream")
    assert (first.returncode, first.stdout) == (0, "one\n"), first.stderr
    wait_for(rig.ask, "the server started by the cold call")
    second = rig.run(configured_home, "agent", "-m", "again", "--no-stream")
    assert (second.returncode, second.stdout) == (0, "two\n"), second.stderr
    # After the first warm call the server learns what it imported lazily; the next call
    # still matches it (the cold call's own imports once changed the environment it was
    # started with, and every later client found it stale).
    wait_for(lambda: "learned" in _log(configured_home), "the server to learn")
    third = rig.run(configured_home, "agent", "-m", "more", "--no-stream")
    assert (third.returncode, third.stdout) == (0, "three\n"), third.stderr
    assert rig.served() == 2 and "stale" not in _log(configured_home)


def test_another_spelling_of_the_interpreter_finds_the_same_server(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    """pip writes a console script's shebang as `bin/python3.11`, while a caller may run
    `bin/python`: one file, so one server. Keyed on the spelling, CI (no venv) ran every
    call cold and its staleness and uid tests found no client on their socket."""
    rig.start(configured_home)
    exe = Path(sys.executable)
    others = [
        p
        for p in sorted(exe.parent.glob("python*"))
        if p.name != exe.name and p.resolve() == exe.resolve() and p.name != "python-config"
    ]
    assert others, f"no other spelling of {exe} beside it"
    llm_server.script([text_reply("same server")])
    res = subprocess.run(
        [str(others[0]), "-m", "picobot_tui", "agent", "-m", "hi", "--no-stream"],
        cwd=home_workspace(configured_home),
        env=rig.env(configured_home),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert (res.returncode, res.stdout) == (0, "same server\n"), res.stderr
    assert rig.served() == 1


def _log(home: Path) -> str:
    return (home / "data/logs/server.log").read_text()


@pytest.mark.parametrize(
    ("extra", "config"),
    [
        ({"PICOBOT_SERVER": "0"}, None),
        ({"PICOBOT_SERVER": ""}, {"server": {"enabled": False}}),
        ({"PICOBOT_SERVER": "", "CI": "true"}, None),
    ],
    ids=["env-off", "config-off", "ci-starts-none"],
)
def test_switched_off_or_ci_starts_no_server(
    configured_home: Path,
    llm_server: OpenAITestServer,
    rig: Rig,
    extra: dict[str, str],
    config: dict[str, object] | None,
) -> None:
    if config is not None:
        path = configured_home / "config.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **config}))
    llm_server.script([text_reply("cold")])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream", **extra)
    assert (res.returncode, res.stdout, res.stderr) == (0, "cold\n", "")
    # The cold process has exited (run() waited), and a start is made at its exit.
    assert rig.server_pids() == [] and rig.sockets() == []


def test_ci_uses_a_server_started_by_hand(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    rig.start(configured_home)
    llm_server.script([text_reply("warm under ci")])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream", PICOBOT_SERVER="", CI="true")
    assert (res.returncode, res.stdout) == (0, "warm under ci\n"), res.stderr
    assert rig.served() == 1


def test_an_idle_server_exits_after_server_idle_minutes(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    path = configured_home / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "server": {"idleMinutes": 0.05}}))
    status = rig.start(configured_home)
    assert status["idle_minutes"] == 0.05
    wait_for(lambda: not rig.server_pids(), "the idle server to exit")
    assert rig.sockets() == []
    assert "idle for 0.05 min: exiting" in _log(configured_home)


def test_server_start_waits_for_a_server_still_in_its_import(
    configured_home: Path, rig: Rig, tmp_path: Path
) -> None:
    """A second `server start` while the first one's server is importing (a TUI's exit
    starts one too): its own server finds the lock held and exits, and it waits for the
    one that holds it instead of failing ("the server exited at once", before)."""
    gate = tmp_path / "gate"
    held = {"PYTHONPATH": HOLD, "HOLD_LITELLM_UNTIL": str(gate), "HOLD_LITELLM_IN": "server"}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    first = rig.popen(configured_home, "server", "start", env_extra=held, **pipes)
    second = None
    try:
        wait_for(lambda: _lock_held(rig), "the first server to take its lock")
        second = rig.popen(configured_home, "server", "start", env_extra=held, **pipes)
        log = configured_home / "data" / "logs" / "server.log"
        wait_for(
            lambda: log.exists() and "another server holds the lock" in log.read_text(),
            "the second server to find the lock held",
        )
        gate.touch()  # the first server's import goes on: it answers both
        outs = [p.communicate(timeout=DEADLINE)[0] for p in (first, second)]
    finally:
        for p in (first, second):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
    assert [first.returncode, second.returncode] == [0, 0], outs
    pid = str(rig.ask()["pid"])  # type: ignore[index]
    assert all(out.startswith(f"started server {pid} (") for out in outs), outs


def _lock_held(rig: Rig) -> bool:
    for lock in (rig.runtime / "picobot").glob("server-*.lock"):
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    return False

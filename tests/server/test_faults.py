"""Faults and load: a killed child, a killed client, a killed server, a dead server's
socket file, two clients at once and 50 at once (no zombie, no leaked fd)."""

from __future__ import annotations

import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.headless.conftest import read_messages, session_files
from tests.server.support import Rig, alive, children, fd_count, wait_for, zombies_of
from tests.support.openai_server import OpenAITestServer, slow, text_reply

pytestmark = pytest.mark.e2e


def _slow_call(rig: Rig, home: Path, llm: OpenAITestServer) -> subprocess.Popen[bytes]:
    """A warm call streaming a long slow answer; returned once its child is running."""
    llm.script([slow(0.05, text_reply("word " * 400, chunk_size=5))])
    proc = rig.popen(
        home, "agent", "-m", "talk", stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    return proc


def _the_child(rig: Rig) -> int:
    status = rig.ask()
    assert status is not None
    [pid] = wait_for(lambda: children(status["pid"]), "the call's child")
    return pid


def test_a_killed_child_ends_the_client_as_a_cold_run_would_end(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    rig.start(configured_home)
    proc = _slow_call(rig, configured_home, llm_server)
    child = _the_child(rig)
    wait_for(lambda: llm_server.completions, "the request")
    os.kill(child, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err  # what a SIGKILLed cold process shows
    assert rig.ask() is not None  # the server goes on


def test_a_killed_client_takes_its_child_with_it(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    status = rig.start(configured_home)
    proc = _slow_call(rig, configured_home, llm_server)
    child = _the_child(rig)
    wait_for(lambda: llm_server.completions, "the request")
    proc.kill()
    proc.communicate(timeout=60)
    wait_for(lambda: not alive(child), "the orphaned child to be killed")
    # Dead first, reaped a moment later (the server waits on its pidfd): then no zombie.
    wait_for(lambda: rig.ask() and rig.ask()["running"] == 0, "the server to reap it")
    assert zombies_of(status["pid"]) == []


def test_a_server_killed_mid_call_fails_the_call_and_the_next_runs(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    status = rig.start(configured_home)
    proc = _slow_call(rig, configured_home, llm_server)
    child = _the_child(rig)
    wait_for(lambda: llm_server.completions, "the request")
    os.kill(status["pid"], signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert b"the warm server stopped during this call" in err
    wait_for(lambda: not alive(child), "the child to die with its server")
    # Its socket file is left behind: the next call runs cold and starts a new server.
    assert rig.sockets() != []
    llm_server.script([text_reply("after the crash")])
    res = rig.run(configured_home, "agent", "-m", "again", "--no-stream")
    assert (res.returncode, res.stdout) == (0, "after the crash\n"), res.stderr
    fresh = wait_for(rig.ask, "a new server")
    assert fresh["pid"] != status["pid"] and fresh["served"] == 0


def test_a_dead_servers_socket_file_is_replaced(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    old = rig.start(configured_home)
    os.kill(old["pid"], signal.SIGKILL)
    wait_for(lambda: not alive(old["pid"]), "the server to die")
    [sock] = rig.sockets()
    llm_server.script([text_reply("cold"), text_reply("warm")])
    first = rig.run(configured_home, "agent", "-m", "one", "--no-stream")
    assert (first.returncode, first.stdout, first.stderr) == (0, "cold\n", "")
    new = wait_for(rig.ask, "the replacing server")
    assert new["pid"] != old["pid"] and rig.sockets() == [sock]
    second = rig.run(configured_home, "agent", "-m", "two", "--no-stream")
    assert (second.returncode, second.stdout) == (0, "warm\n")
    assert rig.served() == 1


def test_two_clients_at_once(configured_home: Path, llm_server: OpenAITestServer, rig: Rig) -> None:
    rig.start(configured_home)
    llm_server.script([slow(0.02, text_reply("same words " * 20, chunk_size=4))] * 2)
    procs = [
        rig.popen(configured_home, "agent", "-m", f"call {i}", "--no-stream",
                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(2)
    ]  # fmt: skip
    wait_for(lambda: rig.ask() and rig.ask()["running"] == 2, "both calls running at once")
    outs = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert [out for out, _ in outs] == [("same words " * 20).encode() + b"\n"] * 2
    assert len(session_files(configured_home)) == 2
    for path in session_files(configured_home):
        assert read_messages(path)[-1]["role"] == "assistant"


def test_fifty_calls_at_once_all_answered_no_zombie_no_leaked_fd(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    status = rig.start(configured_home)
    pid = status["pid"]
    # Warm it once so lazily opened fds (none expected) are counted in the baseline.
    llm_server.script([text_reply("ok")] * 51)
    assert rig.run(configured_home, "agent", "-m", "first", "--no-stream").returncode == 0
    before = fd_count(pid)

    def call(i: int) -> subprocess.CompletedProcess[str]:
        return rig.run(configured_home, "agent", "-m", f"n{i}", "--no-stream", timeout=300)

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(call, range(50)))
    assert [(r.returncode, r.stdout) for r in results] == [(0, "ok\n")] * 50
    assert rig.served() == 51  # every one warm: none fell back to a cold run
    wait_for(lambda: rig.ask()["running"] == 0, "every child reaped")
    assert children(pid) == [] and zombies_of(pid) == []
    # The server closes a status connection just after answering it (reply, then drop),
    # so the last `ask` may still be open for a moment; a leaked fd never closes.
    wait_for(lambda: fd_count(pid) == before, f"the server's fds back to {before}", 30)
    assert len(session_files(configured_home)) == 51


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGUSR1, -signal.SIGUSR1), (signal.SIGWINCH, 0)])
def test_a_relayed_signal_ends_the_call_as_it_ends_a_cold_one(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig, sig: int, code: int
) -> None:
    """SIGUSR1's default action ends a process: the child dies of it and the client dies
    of it too, as a cold run would; SIGWINCH's is to ignore it: the call goes on."""
    rig.start(configured_home)
    llm_server.script([slow(0.01, text_reply("word " * 60, chunk_size=5))])
    proc = rig.popen(
        configured_home, "agent", "-m", "talk", "--no-stream", stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    _the_child(rig)
    wait_for(lambda: llm_server.completions, "the request")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    if code == 0:
        assert out == ("word " * 60).encode() + b"\n"

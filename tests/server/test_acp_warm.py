"""`picobot acp` through the warm server, driven by the real ACP client of tests/acp (the
SDK's client side over a spawned `picobot acp`): the same session run cold and warm gives
the same wire, stderr, exit code, session file and requests to the provider (a
differential, as test_differential.py is for -m and --json); an editor killing its
client leaves no child in the server; a live session neither blocks other calls nor lets
the server idle out; a stale server is never handed the session, and the cold session
starts a fresh server once its own import is done."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from picobot_tui.warm import place, stamp, wire
from tests.acp.client_support import RecordingClient, spawn_agent
from tests.acp.test_acp_acpx import acpx_exe, chunks_text
from tests.headless.conftest import SECRET, cli_env
from tests.server.support import Rig, alive, children, normalise_all, wait_for
from tests.support.openai_server import OpenAITestServer, text_reply, tool_call_reply

pytestmark = pytest.mark.e2e


def _home(root: Path, llm: OpenAITestServer, **server: Any) -> Path:
    home = root / "picobot-home"
    (home / "workspace").mkdir(parents=True)
    (home / "workspace" / "notes.txt").write_text("hello\n")
    config: dict[str, Any] = {
        "agents": {"defaults": {"model": "openai/test-model", "retryBackoff": 0.05}},
        "providers": {"openai": {"apiKey": SECRET, "apiBase": llm.url}},
    }
    if server:
        config["server"] = server
    (home / "config.json").write_text(json.dumps(config))
    return home


def _tree(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): p.read_text(errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _env(rig: Rig, on: bool) -> dict[str, str]:
    return {"PICOBOT_SERVER": "1" if on else "0", "XDG_RUNTIME_DIR": str(rig.runtime)}


async def _session(home: Path, env: dict[str, str], fs: bool) -> dict[str, Any]:
    """initialize, session/new, one prompt (a read, an approved write, an answer), then
    the end of stdin: everything an editor and the disk see."""
    client = RecordingClient(fs=fs)
    client.answer_permissions("allow_once")
    async with spawn_agent(home, client, env=env) as agent:
        sid = await agent.start()
        done = await agent.say(sid, "read the notes, then write a.txt")
        assert done.stop_reason == "end_turn", agent.stderr()[-3000:]
        await agent.close_stdin()
        code = await agent.wait_exit()
    return {
        "code": code,
        "text": client.agent_text(sid),
        "wire": client.wire,
        "stderr": agent.stderr(),
        "sessions": _tree(home / "sessions"),
        "workspace": _tree(home / "workspace"),
    }


STEPS = (
    tool_call_reply("read_file", {"path": "notes.txt"}, id="call_r"),
    tool_call_reply("write_file", {"path": "a.txt", "content": "hi\n"}, id="call_w"),
    text_reply("Read it and wrote a.txt.", chunk_size=3),
)


async def _outcome(rig: Rig, root: Path, llm: OpenAITestServer, on: bool, fs: bool) -> Any:
    llm.script(list(STEPS))
    llm.clear()
    home = _home(root, llm)
    out = await _session(home, _env(rig, on), fs)
    out["sent"] = [r.body for r in llm.completions]
    return normalise_all(json.loads(json.dumps(out)), home)  # (tuples as lists)


@pytest.mark.parametrize("fs", [False, True], ids=["own-fs", "client-fs"])
async def test_an_acp_session_warm_is_the_session_cold(
    fs: bool, rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    rig.start(_home(tmp_path / "s", llm_server))
    cold = await _outcome(rig, tmp_path / "c", llm_server, on=False, fs=fs)
    assert rig.served() == 0
    hot = await _outcome(rig, tmp_path / "w", llm_server, on=True, fs=fs)
    assert rig.served() == 1, "the warm session went cold"
    assert hot["text"] == "Read it and wrote a.txt."
    for key in cold:
        if hot[key] != cold[key]:
            lines = [json.dumps(v[key], indent=1, sort_keys=True).splitlines() for v in (cold, hot)]
            diff = difflib.unified_diff(lines[0], lines[1], "cold", "warm", lineterm="")
            pytest.fail(f"{key} differs:\n" + "\n".join(diff))


async def test_killing_the_warm_client_ends_its_child_and_a_live_session_keeps_the_server(
    rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """The editor SIGKILLs `picobot acp` mid-session: the server's child goes too. While
    the session lives, other calls are served, and the server does not idle out (its
    idle timeout here is 3 s), but it does once the session is gone."""
    home = _home(tmp_path / "k", llm_server, idleMinutes=0.05)
    server_pid = int(rig.start(home)["pid"])
    llm_server.script([text_reply("first answer"), text_reply("meanwhile")])
    async with spawn_agent(home, env=_env(rig, True)) as agent:
        sid = await agent.start()
        assert (await agent.say(sid, "hi")).stop_reason == "end_turn"
        assert agent.client.agent_text(sid) == "first answer"
        [child] = children(server_pid)
        other = await asyncio.to_thread(rig.run, home, "agent", "-m", "x", "--no-stream")
        assert (other.returncode, other.stdout) == (0, "meanwhile\n"), other.stderr
        status = rig.ask()
        assert status is not None and (status["served"], status["running"]) == (2, 1)
        await asyncio.sleep(4)  # past the idle timeout: a live session is no idle server
        assert alive(server_pid) and children(server_pid) == [child]
        agent.process.kill()
        assert await agent.wait_exit() == -signal.SIGKILL
        await asyncio.to_thread(wait_for, lambda: not alive(child), "the child to end")
        assert children(server_pid) == []
    await asyncio.to_thread(wait_for, lambda: not alive(server_pid), "the idle exit", 30)
    assert "idle for" in (home / "data/logs/server.log").read_text()


async def test_a_server_stopped_during_a_session_is_replaced_while_the_session_runs(
    rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """Stopped (or found stale) with an editor's session open, the server lets go of its
    socket and its lock at once: a new one starts and serves while the session ends on
    the old one."""
    home = _home(tmp_path / "k", llm_server)
    old = int(rig.start(home)["pid"])
    llm_server.script([text_reply("one"), text_reply("two"), text_reply("three")])
    async with spawn_agent(home, env=_env(rig, True)) as agent:
        sid = await agent.start()
        assert (await agent.say(sid, "hi")).stop_reason == "end_turn"
        assert rig.ask(wire.STOP) == {"stopping": True}
        new = await asyncio.to_thread(rig.start, home)
        assert new["pid"] != old and alive(old)
        assert (await agent.say(sid, "again")).stop_reason == "end_turn"
        assert agent.client.agent_text(sid) == "onetwo"
        res = await asyncio.to_thread(rig.run, home, "agent", "-m", "x", "--no-stream")
        assert (res.returncode, res.stdout) == (0, "three\n"), res.stderr
        assert rig.served() == 1
    await asyncio.to_thread(wait_for, lambda: not alive(old), "the old server's exit", 30)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
async def test_a_signal_ends_a_warm_session_as_it_ends_a_cold_one(
    signum: int, rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    got = []
    rig.start(_home(tmp_path / "s", llm_server))
    for on in (False, True):
        home = _home(tmp_path / str(on), llm_server)
        llm_server.script([text_reply("before the signal")])
        async with spawn_agent(home, env=_env(rig, on)) as agent:
            sid = await agent.start()
            assert (await agent.say(sid, "hi")).stop_reason == "end_turn"
            agent.process.send_signal(signum)
            try:
                got.append((await agent.wait_exit(), agent.client.agent_text(sid)))
            except AssertionError as e:
                raise AssertionError(f"{'warm' if on else 'cold'}: {e}") from None
    assert got[0] == got[1] and got[0][1] == "before the signal"
    assert rig.served() == 1


def _fake_stale_server(rig: Rig, home: Path) -> tuple[socket.socket, list[Any]]:
    """A server that greets with an older picobot's stamp on this rig's socket path."""
    env = rig.env(home)
    os.environ["XDG_RUNTIME_DIR"], saved = str(rig.runtime), os.environ.get("XDG_RUNTIME_DIR")
    try:
        path = os.path.join(place.runtime_dir(), f"server-{place.install_key(env)}.sock")
    finally:
        if saved is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    got: list[Any] = []

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn:
            old = "0.0.9:" + stamp.compute().split(":", 1)[1]
            wire.send(conn, {"stamp": old, "pid": os.getpid(), "env_names": [], "env": ""})
            data, fds, _, _ = socket.recv_fds(conn, 1, 16)
            got.append((data, list(fds)))

    threading.Thread(target=serve_once, daemon=True).start()
    return listener, got


async def test_a_stale_server_is_told_and_the_session_runs_cold_and_starts_one(
    rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    home = _home(tmp_path / "h", llm_server)
    listener, got = _fake_stale_server(rig, home)
    llm_server.script([text_reply("answered cold")])
    try:
        async with spawn_agent(home, env=_env(rig, True)) as agent:
            sid = await agent.start()
            assert (await agent.say(sid, "hi")).stop_reason == "end_turn"
            assert agent.client.agent_text(sid) == "answered cold"
            assert got == [(wire.STALE, [])]
            # The cold session's import is done: it starts a server while it still runs.
            status = await asyncio.to_thread(wait_for, rig.ask, "the server it started")
            assert status["served"] == 0 and agent.process.returncode is None
            # Not the session's child (it would be its zombie once it exits).
            with open(f"/proc/{status['pid']}/stat") as f:
                assert int(f.read().rsplit(")", 1)[1].split()[1]) != agent.process.pid
    finally:
        listener.close()


async def test_the_guard_holds_in_the_warm_child(
    rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """A tool that prints, warm: stdout carries JSON-RPC only."""
    home = _home(tmp_path / "h", llm_server)
    rig.start(home)
    llm_server.script(
        [
            tool_call_reply("exec", {"command": "echo stray-output"}, id="c1"),
            text_reply("done"),
        ]
    )
    client = RecordingClient()
    client.answer_permissions("allow_once")
    async with spawn_agent(home, client, env=_env(rig, True), tee=True) as agent:
        sid = await agent.start()
        assert (await agent.say(sid, "run it")).stop_reason == "end_turn"
        raw = bytes(agent.stdout or b"")
    assert rig.served() == 1
    lines = [line for line in raw.splitlines() if line.strip()]
    assert lines and all(json.loads(line).get("jsonrpc") == "2.0" for line in lines)


@pytest.mark.parametrize(
    ("argv", "warm"),
    [
        (["acp"], True),
        (["acp", "--logs"], True),
        (["acp", "--no-logs"], True),
        (["acp", "--help"], False),  # Typer answers it on the real stdout: cold
        (["acp", "--lgos"], False),
        (["agent", "-m", "hi"], True),
        (["sessions", "list"], False),
    ],
)
def test_which_acp_calls_go_through_the_server(argv: list[str], warm: bool) -> None:
    from picobot_tui.warm.policy import is_warm_call

    assert is_warm_call(["picobot", *argv]) is warm


def _acpx(
    home: Path, user_home: Path, rig: Rig, on: bool, *args: str
) -> subprocess.CompletedProcess[str]:
    """acpx (npm, tests/acp/node) running `picobot acp` as its agent; acpx keeps its own
    state under ~/.acpx, so HOME is `user_home`."""
    return subprocess.run(
        [str(acpx_exe()), "--agent", "picobot acp", "--cwd", str(home / "workspace"), *args],
        cwd=home / "workspace",
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=cli_env(home, HOME=str(user_home), **_env(rig, on)),
    )


def test_acpx_gets_the_same_session_warm_as_cold(
    rig: Rig, llm_server: OpenAITestServer, tmp_path: Path
) -> None:
    """Another ecosystem's client (acpx, Node) sees the same JSON-RPC warm and cold."""
    acpx_exe()  # skips (or fails under CI) before a server is started for nothing
    user_home = tmp_path / "acpx-home"
    user_home.mkdir()
    # HOME is among the variables the server's imports read: it is started under acpx's.
    started = rig.run(_home(tmp_path / "s", llm_server), "server", "start", HOME=str(user_home))
    assert started.returncode == 0, started.stdout + started.stderr
    out = []
    for on in (False, True):
        home = _home(tmp_path / ("w" if on else "c"), llm_server)  # paths of one length
        llm_server.script([text_reply("Hello from picobot through acpx.", chunk_size=6)])
        llm_server.clear()
        proc = _acpx(home, user_home, rig, on, "--format", "json", "exec", "say hello")
        assert proc.returncode == 0, proc.stderr[-3000:]
        got = {
            "stdout": [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")],
            "sessions": _tree(home / "sessions"),
            "sent": [r.body for r in llm_server.completions],
        }
        out.append(normalise_all(got, home))
    assert rig.served() == 1, "the warm run went cold"
    assert chunks_text(out[1]["stdout"]) == "Hello from picobot through acpx."
    for key in out[0]:
        assert out[0][key] == out[1][key], key

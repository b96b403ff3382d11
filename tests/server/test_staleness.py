"""Nothing is stale: a config change between two warm calls takes effect, a touched
picobot source file replaces the server, and a server greeting with another stamp is
never handed a call."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from picobot_tui.warm import place, stamp, wire
from tests.server.support import Rig, wait_for
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_a_config_change_between_two_warm_calls_takes_effect(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    rig.start(configured_home)
    llm_server.script([text_reply("one"), text_reply("two")])
    assert rig.run(configured_home, "agent", "-m", "a").returncode == 0
    assert llm_server.last_body["max_tokens"] == 8192
    path = configured_home / "config.json"
    config = json.loads(path.read_text())
    config["agents"]["defaults"]["maxTokens"] = 77
    path.write_text(json.dumps(config))
    assert rig.run(configured_home, "agent", "-m", "b").returncode == 0
    assert llm_server.last_body["max_tokens"] == 77
    assert rig.served() == 2


def _copied_install(dest: Path) -> Path:
    """picobot laid out as a wheel installs it (widgets/ and styles/ inside), importable
    from `dest` with PYTHONPATH: an install of its own, so touching its files leaves the
    checkout (and every other test's server) alone."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "picobot_tui", dest / "picobot_tui", ignore=skip)
    for sub in ("widgets", "styles"):
        shutil.copytree(ROOT / sub, dest / "picobot_tui" / sub, ignore=skip)
    return dest


def test_a_touched_source_file_replaces_the_server(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig, tmp_path: Path
) -> None:
    pkg = _copied_install(tmp_path / "pkg")

    def call(text: str) -> subprocess.CompletedProcess[str]:
        env = rig.env(configured_home, PYTHONPATH=str(pkg))
        return subprocess.run(
            [sys.executable, "-m", "picobot_tui", "agent", "-m", text, "--no-stream"],
            env=env, cwd=configured_home / "workspace", capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip

    llm_server.script([text_reply(str(i)) for i in range(4)])
    assert call("cold, starts a server").stdout == "0\n"
    first = wait_for(rig.ask, "the copy's server")
    assert first["socket"].endswith(".sock") and call("warm").stdout == "1\n"
    assert rig.ask()["served"] == 1
    source = pkg / "picobot_tui" / "core" / "loop.py"
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    # The server is stale: this call runs cold, the old server exits, a new one starts.
    assert call("stale").stdout == "2\n"
    second = wait_for(
        lambda: (s := rig.ask()) and s["pid"] != first["pid"] and s, "the replacing server"
    )
    assert second["served"] == 0 and second["stamp"] != first["stamp"]
    assert call("warm again").stdout == "3\n"
    assert rig.ask()["served"] == 1


def test_a_server_with_an_older_stamp_is_never_handed_a_call(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    """A server that speaks the protocol but greets with another stamp (an older picobot
    left running): the client tells it it is stale and runs the call cold, fds kept."""
    env = rig.env(configured_home)
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
    got: list[tuple[bytes, list[int]]] = []

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn:
            old = "0.0.9:" + stamp.compute().split(":", 1)[1]
            wire.send(conn, {"stamp": old, "pid": os.getpid(), "env_names": [], "env": ""})
            data, fds, _, _ = socket.recv_fds(conn, 1, 16)
            got.append((data, list(fds)))

    thread = threading.Thread(target=serve_once, daemon=True)
    thread.start()
    llm_server.script([text_reply("answered cold")])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream", PICOBOT_SERVER="1")
    thread.join(timeout=60)
    listener.close()
    assert (res.returncode, res.stdout) == (0, "answered cold\n"), res.stderr
    assert got == [(wire.STALE, [])]

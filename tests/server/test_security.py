"""A second user cannot reach the server, a socket another user listens on is never
handed a call, and a socket folder that is not this user's 0700 one is not used. A real
second uid (nobody, 65534): these tests need root, as CI and this machine have."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from picobot_tui.warm import place
from tests.server.support import Rig
from tests.support.openai_server import OpenAITestServer, text_reply

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as a second uid"),
]
NOBODY = 65534

FAKE_SERVER = """
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
os.setgid(65534); os.setuid(65534)  # listen() records the listener's uid: nobody's
s.listen(4)
print("ready", flush=True)
conn, _ = s.accept()
conn.settimeout(60)
print(repr(conn.recv(1)), flush=True)
"""
CONNECT_AS_NOBODY = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(type(e).__name__); sys.exit()
print("connected", repr(s.recv(4096)))
"""


def _socket_path(rig: Rig, home: Path) -> str:
    env = rig.env(home)
    return os.path.join(rig.runtime, "picobot", f"server-{place.install_key(env)}.sock")


def test_a_socket_another_uid_listens_on_is_refused(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig
) -> None:
    (rig.runtime / "picobot").mkdir(mode=0o700)
    path = _socket_path(rig, configured_home)
    fake = subprocess.Popen(
        [sys.executable, "-c", FAKE_SERVER, path], stdout=subprocess.PIPE, text=True
    )
    assert fake.stdout is not None and fake.stdout.readline() == "ready\n"
    llm_server.script([text_reply("cold, not theirs")])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream")
    assert (res.returncode, res.stdout) == (0, "cold, not theirs\n"), res.stderr
    out, _ = fake.communicate(timeout=60)
    assert out == "b''\n"  # it was sent nothing: no lead byte, no fds
    assert rig.server_pids() == []  # and no server of ours was started over it


def test_a_second_uid_cannot_reach_the_server_nor_be_served(
    configured_home: Path, rig: Rig
) -> None:
    rig.start(configured_home)
    [sock] = rig.sockets()
    # The system's interpreter: nobody may not be able to enter the virtualenv's folder.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    as_nobody = [python, "-c", CONNECT_AS_NOBODY, str(sock)]
    run = {"user": NOBODY, "group": NOBODY, "capture_output": True, "text": True}
    assert subprocess.run(as_nobody, **run, timeout=60).stdout == "PermissionError\n"
    # With the folders opened up (a mistake the client itself refuses to make), the
    # server still checks the peer's uid and greets nobody else.
    folder = sock.parent
    try:
        os.chmod(rig.runtime, 0o711)
        os.chmod(folder, 0o711)
        os.chmod(sock, 0o666)
        out = subprocess.run(as_nobody, **run, timeout=60).stdout
    finally:
        os.chmod(sock, 0o600)
        os.chmod(folder, 0o700)
        os.chmod(rig.runtime, 0o700)
    assert out == "connected b''\n"
    log = (configured_home / "data/logs/server.log").read_text()
    assert "refused a connection from another uid" in log
    assert rig.ask() is not None  # still serving its own user


@pytest.mark.parametrize("fault", ["mode-755", "owner-nobody"])
def test_a_socket_folder_that_is_not_ours_alone_is_not_used(
    configured_home: Path, llm_server: OpenAITestServer, rig: Rig, fault: str
) -> None:
    folder = rig.runtime / "picobot"
    folder.mkdir()
    if fault == "mode-755":
        os.chmod(folder, 0o755)
    else:
        os.chmod(folder, 0o700)
        os.chown(folder, NOBODY, NOBODY)
    llm_server.script([text_reply("cold")])
    res = rig.run(configured_home, "agent", "-m", "hi", "--no-stream")
    assert (res.returncode, res.stdout, res.stderr) == (0, "cold\n", "")
    assert list(folder.iterdir()) == [] and rig.server_pids() == []

"""A private warm server for one test (or one module): its own runtime dir, the real
console script, the real protocol for status; stopped and checked gone at teardown."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from picobot_tui.warm import wire
from picobot_tui.warm.client import Missed, connect
from tests.headless.conftest import cli_env, home_workspace, picobot_exe, run_cli_env

DEADLINE = 120.0
"""Seconds any wait here allows (a server's import is ~5 s, far more on a loaded box)."""


def wait_for(cond: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    """Poll `cond` until it returns something truthy; fail after `deadline` seconds."""
    end = time.monotonic() + deadline
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """Running (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Rig:
    """One runtime dir (so one server per import environment) for a test."""

    def __init__(self) -> None:
        # Short, under /tmp: a Unix socket's path must fit in 108 bytes.
        self.runtime = Path(tempfile.mkdtemp(prefix="pbr", dir="/tmp"))

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """The headless tests' environment with this rig's server turned on; a variable
        given as "" is left out."""
        env = cli_env(
            home, **{"PICOBOT_SERVER": "1", "XDG_RUNTIME_DIR": str(self.runtime), **extra}
        )
        return {k: v for k, v in env.items() if v != "" or k not in extra}

    def run(
        self, home: Path, *args: str, input: str | None = None, timeout: float = 90, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return run_cli_env(home, args, self.env(home, **extra), input=input, timeout=timeout)

    def popen(self, home: Path, *args: str, **kw: Any) -> subprocess.Popen[bytes]:
        extra = kw.pop("env_extra", {})
        return subprocess.Popen(
            [*picobot_exe(), *args], cwd=home_workspace(home), env=self.env(home, **extra), **kw
        )

    def sockets(self) -> list[Path]:
        return sorted((self.runtime / "picobot").glob("server-*.sock"))

    def ask(self, lead: bytes = wire.STATUS) -> dict[str, Any] | None:
        """The status of the server on the one socket (the real protocol), or None."""
        socks = self.sockets()
        if not socks:
            return None
        sock = connect(str(socks[0]))
        if isinstance(sock, Missed):
            return None
        try:
            sock.settimeout(10)
            wire.recv(sock)
            sock.sendall(lead)
            answer: dict[str, Any] = wire.recv(sock)
            return answer
        except (OSError, wire.WireError):
            return None
        finally:
            sock.close()

    def start(self, home: Path) -> dict[str, Any]:
        res = self.run(home, "server", "start", timeout=DEADLINE)
        assert res.returncode == 0, res.stdout + res.stderr
        status = self.ask()
        assert status is not None, res.stdout
        return status

    def served(self) -> int:
        status = self.ask()
        assert status is not None, "no server answers"
        return int(status["served"])

    def server_pids(self) -> list[int]:
        """Every server process of this rig (found by its socket argument, whatever state
        its socket file is in)."""
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            mine = b"run" in cmd and any(str(self.runtime).encode() in c for c in cmd)
            if mine and alive(int(entry.name)):
                out.append(int(entry.name))
        return out

    def close(self) -> None:
        """Stop every server of this rig; fail if one had to be killed."""
        pids = self.server_pids()
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        try:
            wait_for(lambda: not any(alive(p) for p in pids), "the servers to exit", 30)
        finally:
            left = [p for p in pids if alive(p)]
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            shutil.rmtree(self.runtime, ignore_errors=True)
        assert not left, f"servers still running after SIGTERM: {left}"


_NORMALISE = [
    (re.compile(r"(cli|acp)([:_])[0-9a-f]{8}-\d{8}-\d{6}"), r"\1\2<KEY>"),
    (re.compile(r"\b[0-9a-f]{8}-\d{8}-\d{6}\b"), "<ID>"),  # a session id as printed
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}:\d{2})?"), "<T>"),
    (re.compile(r'"duration_ms": ?[\d.]+'), '"duration_ms": <MS>'),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<DUR>"),
    (re.compile(r"(?<![0-9a-f])[0-9a-f]{8,}(?![0-9a-f])"), "<HEX>"),
]


def normalise_all(value: Any, *homes: Path) -> Any:
    """normalise() every string inside lists and dicts (keys too)."""
    if isinstance(value, str):
        return normalise(value, *homes)
    if isinstance(value, list):
        return [normalise_all(v, *homes) for v in value]
    if isinstance(value, dict):
        return {normalise(str(k), *homes): normalise_all(v, *homes) for k, v in value.items()}
    return value


def normalise(text: str, *homes: Path) -> str:
    """Times, durations and ids out; each home's path as <HOME>."""
    for home in homes:
        text = text.replace(str(home), "<HOME>")
    for pattern, repl in _NORMALISE:
        text = pattern.sub(repl, text)
    return text


def children(pid: int) -> list[int]:
    """The live children of `pid` (the server's: the calls it forked)."""
    try:
        tids = Path(f"/proc/{pid}/task").iterdir()
        found: list[int] = []
        for tid in tids:
            text = (tid / "children").read_text().split()
            found.extend(int(c) for c in text)
        return [c for c in found if alive(c)]
    except OSError:
        return []


def zombies_of(pid: int) -> list[int]:
    """Children of `pid` that exited and were never reaped."""
    try:
        kids = [int(c) for t in Path(f"/proc/{pid}/task").iterdir()
                for c in (t / "children").read_text().split()]  # fmt: skip
    except OSError:
        return []
    return [c for c in kids if not alive(c) and Path(f"/proc/{c}").exists()]


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))

"""`picobot server status|start|stop`: ask the server over its own socket (so the same
peer-uid check guards them), and wait for what was asked with a deadline."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from picobot_tui.warm import launch, place, policy, stamp, wire
from picobot_tui.warm.client import Missed, connect

START_WAIT = 120.0
"""Seconds `server start` waits for the new server to answer (its import takes ~4-6 s
here, far longer on a loaded machine)."""
STOP_WAIT = 30.0
"""Seconds `server stop` waits for the process to be gone (it lets running calls end)."""


def _ask(lead: bytes) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """(hello, answer) from the server, or why there is none."""
    try:
        path = place.socket_path()
    except (place.PlaceError, OSError) as e:
        return f"runtime dir: {e}"
    sock = connect(path)
    if isinstance(sock, Missed):
        return sock.why
    try:
        sock.settimeout(10)
        hello = wire.recv(sock)
        sock.sendall(lead)
        return hello, wire.recv(sock)
    except (OSError, wire.WireError) as e:
        return f"no answer: {e}"
    finally:
        sock.close()


def status(echo: Callable[[str], None]) -> int:
    got = _ask(wire.STATUS)
    if isinstance(got, str):
        echo(f"no server running ({got})")
        return 1
    info = got[1]
    fresh = "current" if info["stamp"] == stamp.compute() else "stale (replaced at next call)"
    echo(f"pid        {info['pid']}")
    echo(f"rss        {info['rss_kib'] / 1024:.0f} MiB")
    echo(f"stamp      {info['stamp']} ({fresh})")
    echo(f"uptime     {_duration(info['uptime'])}")
    echo(f"calls      {info['served']} served, {info['running']} running")
    echo(f"idle exit  after {info['idle_minutes']:g} min without a call")
    echo(f"socket     {info['socket']}")
    echo(f"log        {launch.log_path(os.environ)}")
    return 0


def _duration(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(echo: Callable[[str], None]) -> int:
    got = _ask(wire.STOP)
    if isinstance(got, str):
        echo(f"no server running ({got})")
        return 0
    pid = int(got[0]["pid"])
    deadline = time.monotonic() + STOP_WAIT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)  # another process's exit: no event to wait on without a pidfd
    if _alive(pid):
        echo(f"server {pid} is still finishing its running calls")
        return 1
    echo(f"stopped server {pid}")
    return 0


def start(echo: Callable[[str], None]) -> int:
    rules = policy.decide(os.environ)
    if not rules.attach:
        echo("the server is turned off (PICOBOT_SERVER=0 or server.enabled: false)")
        return 2
    got = _ask(wire.STATUS)
    if not isinstance(got, str):
        if got[1]["stamp"] == stamp.compute():
            echo(f"server {got[1]['pid']} is already running")
            return 0
        stop(lambda _: None)
    path = place.socket_path()
    pid = launch.start_background(path, rules.idle_minutes)
    if pid is None:
        echo("could not start the server")
        return 1
    deadline = time.monotonic() + START_WAIT
    ours = True
    while time.monotonic() < deadline:
        got = _ask(wire.STATUS)
        if not isinstance(got, str):
            echo(f"started server {got[1]['pid']} ({got[1]['rss_kib'] / 1024:.0f} MiB)")
            return 0
        done, status = os.waitpid(pid, os.WNOHANG) if ours else (0, 0)
        if done == pid:  # our child exited before answering
            if os.waitstatus_to_exitcode(status) != 0:
                echo(f"the server exited at once; see {launch.log_path(os.environ)}")
                return 1
            # 0: another server holds the lock (one still in its import, e.g. the one a
            # TUI's exit started): it is the one to wait for.
            ours = False
        time.sleep(0.1)  # its import runs in another process
    echo(f"the server did not answer within {START_WAIT:g} s; see {launch.log_path(os.environ)}")
    return 1

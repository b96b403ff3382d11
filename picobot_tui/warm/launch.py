"""Start a server in the background, detached from the call that asked for it.

Started when the cold call exits (an atexit hook), not beside it: on 2 cores the server's
own `import litellm` (~4 s of CPU) would slow the cold call it runs next to. It gets
its own session (no terminal, no signals from the caller's), stdin from /dev/null, its log
in picobot's log folder, and none of the caller's other fds: a server holding a pipe of
its caller's would keep whoever reads that pipe waiting for its end.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def log_path(environ: Mapping[str, str]) -> str:
    """`<picobot home>/data/logs/server.log`."""
    home = environ.get("PICOBOT_HOME") or os.path.join("~", ".picobot")
    return os.path.join(os.path.expanduser(home), "data", "logs", "server.log")


def _open_log(path: str) -> int:
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def server_argv(sock: str, idle_minutes: float) -> list[str]:
    return [
        sys.executable, "-m", "picobot_tui", "server", "run",
        "--socket", sock, "--idle-minutes", repr(idle_minutes),
    ]  # fmt: skip


def start_background(
    sock: str,
    idle_minutes: float,
    environ: Mapping[str, str] | None = None,
    *,
    detached: bool = False,
) -> int | None:
    """Spawn `picobot server run` detached, in `environ` (default: this process's);
    its pid, or None if it could not be started. `detached`: through a shell that exits
    at once (reaped here), so the server is not this process's child: a process that
    runs on for hours (a cold `picobot acp`) would otherwise keep it as a zombie once it
    exits; the pid is then the shell's."""
    import subprocess

    env = dict(os.environ if environ is None else environ)
    argv = server_argv(sock, idle_minutes)
    if detached and os.path.exists("/bin/sh"):
        argv = ["/bin/sh", "-c", '"$@" &', "sh", *argv]
    try:
        log = _open_log(log_path(env))
    except OSError:
        log = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            close_fds=True,
            start_new_session=True,
            env=env,
        )
    except OSError:
        return None
    finally:
        os.close(log)
    if argv[0] == "/bin/sh":
        proc.wait()  # the shell's own exit, at once: the server runs on as init's
        return proc.pid
    # Not waited for: it outlives this process and is then reaped by init.
    proc.returncode = 0  # keep Popen.__del__ from warning about a running child
    return proc.pid


def start_if_absent(environ: dict[str, str]) -> None:
    """Start a server in `environ` if the policy allows it (not under CI, not turned off)
    and none answers on its socket; never raises (the next call just runs cold)."""
    import contextlib

    from picobot_tui.warm import place, policy
    from picobot_tui.warm.client import Missed, connect

    rules = policy.decide(environ)
    if not rules.start:
        return
    with contextlib.suppress(OSError, place.PlaceError):
        path = place.socket_path(environ)
        sock = connect(path)
        if not isinstance(sock, Missed):
            sock.close()  # one is there (a stale one is replaced by the next call)
            return
        if sock.start:
            start_background(path, rules.idle_minutes, environ)

"""The client half: hand this call to a warm server and stand in for it until it exits.

Stdlib only (socket, json, signal, struct, zlib and picobot's own stdlib-only modules):
it runs before Typer, pydantic or LiteLLM is imported, so a warm call costs an
interpreter start (~40 ms here) plus a fork, not a 4 s import.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
from typing import NamedTuple

from picobot_tui.run import inherited
from picobot_tui.warm import place, stamp, wire

CONNECT_TIMEOUT = 2.0
HELLO_TIMEOUT = 60.0
"""Seconds to wait for a server that has our connection queued to greet us before running
cold. Generous on purpose: with 50 calls at once on 2 cores the server gets ~1/50 of the
CPU and greeted some clients after more than 10 s (7 of 50 went cold at 10 s); a cold run
then costs ~4 s of CPU more than waiting. Only a stopped or hung server makes it expire."""
RELAYED = (
    signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
    signal.SIGWINCH, signal.SIGTSTP, signal.SIGCONT, signal.SIGUSR1, signal.SIGUSR2,
)  # fmt: skip
LIMITS = ("RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_DATA",
          "RLIMIT_STACK", "RLIMIT_CPU", "RLIMIT_NPROC")  # fmt: skip
"""The caller's `ulimit`s, applied in the child (it would inherit the server's)."""
MAX_PASSED = 250
"""fds passed at most (SCM_RIGHTS carries 253 in one message; one is the cwd)."""
EXIT_ERROR = 1  # run/exit_codes.py's, not imported: that module loads typing's Final


class Missed(NamedTuple):  # not a dataclass: `dataclasses` costs ~7 ms to import here
    """The call was not handed over (nothing of it ran): run it cold."""

    why: str
    start: bool
    """A new server is wanted (none was there, or the one there was stale)."""


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end (SO_PEERCRED: pid, uid, gid)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def connect(path: str) -> socket.socket | Missed:
    """A connection to the server at `path`, greeted and checked, or why not."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(path)
    except FileNotFoundError:
        sock.close()
        return Missed("no server", start=True)
    except ConnectionRefusedError:
        sock.close()
        return Missed("a dead server's socket", start=True)
    except OSError as e:
        sock.close()
        return Missed(f"connect: {e}", start=False)
    if peer_uid(sock) != os.getuid():
        sock.close()
        return Missed("the socket belongs to another user", start=False)
    return sock


def _limits() -> dict[str, list[int]]:
    import resource

    return {n: list(resource.getrlimit(getattr(resource, n))) for n in LIMITS}


def passed_fds() -> list[int]:
    """0, 1, 2 and every other fd a cold process would have inherited (not close-on-exec:
    a make jobserver's pipe, bash's `<(…)`), as many as one message can carry."""
    import fcntl

    out = [0, 1, 2]
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            if not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
                out.append(fd)
        except OSError:
            continue  # listdir's own fd
    return out[:MAX_PASSED]


def request_for(argv: list[str], fds: list[int]) -> dict[str, object]:
    mask = os.umask(0)
    os.umask(mask)
    return {
        "argv": argv, "env": dict(os.environ), "umask": mask, "limits": _limits(), "fds": fds,
        # What a cold process would inherit across exec besides: the ignored signals and
        # the blocked ones (a fresh interpreter resets neither).
        "ignored": sorted(inherited.ignored()),
        "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    }  # fmt: skip


def greet(sock: socket.socket, timeout: float = HELLO_TIMEOUT) -> Missed | None:
    """Read the server's hello and check that it serves this install and environment;
    None when it does (the caller may hand it a call), else why not."""
    sock.settimeout(timeout)
    hello = wire.recv(sock)
    if hello.get("stamp") != stamp.compute():
        sock.sendall(wire.STALE)  # it exits; a fresh one replaces it
        return Missed("stale server", start=True)
    if hello.get("env") != stamp.env_digest(list(hello.get("env_names", [])), os.environ):
        # What the imports read differs here (e.g. a LiteLLM switch): this call runs
        # cold, and the next one gets a server imported under its environment.
        sock.sendall(wire.STALE)
        return Missed("the server was imported under other variables", start=True)
    return None


def hand_over(sock: socket.socket, argv: list[str]) -> int | Missed:
    """Greet, check the stamp, pass the call; then relay signals until the child exits."""
    try:
        if (missed := greet(sock)) is not None:
            return missed
        fds = passed_fds()
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            socket.send_fds(sock, [wire.RUN], [cwd, *fds])
        finally:
            os.close(cwd)
        wire.send(sock, request_for(argv, fds))
        started = wire.recv(sock)
    except (OSError, wire.WireError, ValueError) as e:
        return Missed(f"hand-over: {e}", start=False)
    if "child" not in started:
        return Missed(f"refused: {started.get('error', started)}", start=False)
    sock.settimeout(None)
    return _stand_in(sock)


def _stand_in(sock: socket.socket) -> int:
    """Relay signals to the child until its status comes back; exit as it did."""

    def relay(signum: int, frame: object) -> None:
        try:
            sock.sendall(wire.encode({"kill": signum}))
        except OSError:
            return
        if signum == signal.SIGTSTP:
            os.kill(os.getpid(), signal.SIGSTOP)  # stop with it, so the shell sees a stop

    # An ignored signal is not relayed: it stays ignored here, and the child ignores it.
    relayed = [sig for sig in RELAYED if not inherited.is_ignored(sig)]
    before = {sig: signal.signal(sig, relay) for sig in relayed}
    try:
        while True:
            msg = wire.recv(sock)
            if "exit" in msg:
                return int(msg["exit"])
            if "signal" in msg:
                return _die_like(int(msg["signal"]))
    except (OSError, wire.WireError):
        sys.stderr.write("picobot: the warm server stopped during this call (see server.log)\n")
        return EXIT_ERROR
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        sock.close()


def _die_like(signum: int) -> int:
    """End this process by the signal that ended the child, as the shell would have seen
    a cold run end; 128 + signum if the signal does not end a process."""
    sys.stdout.flush()
    if signum not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    return 128 + signum


def attach(argv: list[str]) -> int | Missed:
    """Run `argv` in the warm server: the child's exit code, or Missed (run cold)."""
    try:
        path = place.socket_path()
    except (place.PlaceError, OSError) as e:
        return Missed(f"runtime dir: {e}", start=False)
    sock = connect(path)
    if isinstance(sock, Missed):
        return sock
    try:
        return hand_over(sock, argv)
    finally:
        sock.close()

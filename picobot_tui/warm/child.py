"""The forked child becomes the call: the client's fds at their numbers, its cwd, umask,
limits, environment and argv, Python's default signal handlers (the caller's ignored and
blocked signals kept, as exec keeps them), fresh random state and fresh std streams; then
it runs the cold code path and exits as the interpreter would."""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import random
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from picobot_tui.run import inherited

PR_SET_PDEATHSIG = 1
_DEFAULT_HANDLERS: dict[int, Callable[[int, Any], Any] | int] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGPIPE: signal.SIG_IGN,
}
"""A fresh interpreter's handlers: SIGINT raises KeyboardInterrupt, SIGPIPE is ignored;
every other signal has its default action."""


def die_with_server() -> None:
    """SIGKILL this child when the server dies (a server killed mid-call leaves no call
    running unseen: its client is told, and exits)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def place_fds(received: Sequence[int], targets: Sequence[int]) -> None:
    """Put each received fd at the number it had in the client, close every other fd."""
    keep = set()
    moved = []
    high = max([*targets, *received, 2]) + 1
    for fd in received:
        new = _dup_above(fd, high)
        moved.append(new)
        keep.add(new)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):  # listdir's own fd, closed already
                os.close(fd)
    for new, target in zip(moved, targets, strict=True):
        os.dup2(new, target, inheritable=True)
        os.close(new)


def _dup_above(fd: int, floor: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)


def _limits(limits: dict[str, list[int]]) -> None:
    import resource

    for name, (soft, hard) in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            # Above the server's hard limit (only root may raise it): keep the soft one.
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (soft, resource.getrlimit(which)[1]))


def _streams() -> None:
    """New sys.stdin/stdout/stderr over fds 0/1/2, made as a fresh interpreter makes them
    (line-buffered stdout on a terminal; stderr always line-buffered, backslashreplace)."""
    enc = os.environ.get("PYTHONIOENCODING", "").split(":")[0] or None
    encoding = enc or ("utf-8" if sys.flags.utf8_mode else None)
    if encoding is None:
        import locale

        encoding = locale.getpreferredencoding(False)
    errors = "surrogateescape" if encoding.lower().replace("-", "") in ("utf8", "ascii") else None
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))

    def wrap(fd: int, write: bool, err: str | None) -> io.TextIOWrapper:
        try:
            tty = os.isatty(fd)
        except OSError:
            tty = False
        raw: Any = io.FileIO(fd, "w" if write else "r", closefd=False)
        buf = (
            raw
            if (write and unbuffered)
            else (io.BufferedWriter(raw) if write else io.BufferedReader(raw))
        )
        return io.TextIOWrapper(
            buf,
            encoding=encoding,
            errors=err,
            line_buffering=write and (tty or fd == 2),
            write_through=write and unbuffered,
        )

    sys.stdin, sys.stdout = wrap(0, False, errors), wrap(1, True, errors)
    sys.stderr = wrap(2, True, "backslashreplace")
    # The originals too (faulthandler, Rich and Textual read them); typeshed calls them Final.
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr  # type: ignore[misc]


def become(
    request: dict[str, Any], received: Sequence[int], effects: dict[str, str | None]
) -> None:
    """Turn this forked process into the client's call (fds: cwd first, then `fds`);
    `effects`: what the server's imports did to the environment (preload.env_effects)."""
    signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, _DEFAULT_HANDLERS.get(sig, signal.SIG_DFL))
        except (OSError, ValueError):
            continue
    # The caller's ignored and blocked signals, as exec would have kept them for a cold run.
    inherited.adopt(request.get("ignored", ()))
    signal.pthread_sigmask(signal.SIG_SETMASK, request.get("blocked", ()))
    die_with_server()
    os.setpgid(0, 0)  # its own process group, as a shell gives each job
    cwd, *fds = received
    os.fchdir(cwd)
    os.close(cwd)
    place_fds(fds, request["fds"])
    os.umask(int(request["umask"]))
    _limits(request.get("limits", {}))
    os.environ.clear()
    os.environ.update(request["env"])
    for name, value in effects.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    sys.argv = list(request["argv"])
    random.seed()  # random reseeds at fork by itself (3.7+); said here, not assumed
    _streams()


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run(call: Callable[[], object], learned: str) -> int:
    """Run the cold entry point and finish as the interpreter would: wait for non-daemon
    threads, run atexit handlers, flush (a failed flush exits 120, as Python does); then
    tell the server which modules the call imported (learn.py)."""
    from picobot_tui.warm import learn

    before = list(sys.modules)
    try:
        call()
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    learn.record(learned, learn.new_since(before))
    return code

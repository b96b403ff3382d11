"""The server: one process per install and user, a selector loop, a fork per call.

Single-threaded on purpose: a fork copies only the calling thread, so the server never
has another one. It holds no config, key, session or event loop: each child reads its
own. A connection's life: greeted with the stamp; sends its fds and request; the server
forks, and then relays the client's signals to the child (by pidfd, never to a reused
pid), SIGKILLs the child if the client goes away (a killed client behaves like a killed
cold process), and sends the child's status when it is reaped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from picobot_tui.warm import child, learn, place, stamp, wire

LOCK_WAIT = 10.0
"""Seconds a new server waits for the lock of one that is exiting (a stale one lets go
within ~0.1 s of being told)."""
STAMP_CHECK = 60.0
"""Seconds between the idle server's checks of its own stamp: a stale one exits instead
of holding ~200 MB until the next call tells it."""
MAX_FDS = 253
"""SCM_RIGHTS' limit per message (SCM_MAX_FD)."""


def log(message: str) -> None:
    stamp_time = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stderr.write(f"{stamp_time} picobot server[{os.getpid()}]: {message}\n")
    sys.stderr.flush()


@dataclass(eq=False)
class Conn:
    sock: socket.socket
    state: str = "lead"
    fds: list[int] = field(default_factory=list)
    reader: wire.FrameReader = field(default_factory=wire.FrameReader)
    pid: int = 0
    pidfd: int = -1
    gone: bool = False


class Server:
    def __init__(self, path: str, idle_minutes: float, call: Callable[[], object]) -> None:
        self.env_names: list[str] = []
        self.env = ""
        self.env_before = dict(os.environ)  # what the imports saw: the digest's values
        self.env_effects: dict[str, str | None] = {}
        self.path = path
        self.idle = idle_minutes * 60
        self.call = call
        self.stamp = stamp.compute()  # before the imports: a file changed during them is seen
        self.started = time.time()
        self.sel = selectors.DefaultSelector()
        self.conns: set[Conn] = set()
        self.by_pidfd: dict[int, Conn] = {}
        self.listener: socket.socket | None = None
        self.inode = 0
        self.stopping = False
        self.last = time.monotonic()
        self.served = 0
        self.lock = -1
        """The lock fd (serve's): let go when this server stops listening."""

    # -- the socket ---------------------------------------------------------------------
    def bind(self) -> None:
        """Listen on a fresh socket, then move it over `path` in one rename: a client
        never finds a half-made socket, and a dead server's file is replaced."""
        tmp = f"{self.path}.{os.getpid()}.tmp"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        old = os.umask(0o177)
        try:
            sock.bind(tmp)
        finally:
            os.umask(old)
        os.chmod(tmp, 0o600)
        sock.listen(128)
        os.rename(tmp, self.path)
        self.inode = os.stat(self.path).st_ino
        sock.setblocking(False)
        self.listener = sock
        self.sel.register(sock, selectors.EVENT_READ, None)

    def unbind(self) -> None:
        """Stop listening; remove the socket file only if it is still ours."""
        if self.listener is None:
            return
        self.sel.unregister(self.listener)
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        self.listener.close()
        self.listener = None

    # -- the loop -----------------------------------------------------------------------
    def run(self) -> int:
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *a: None)
        self.sel.register(rfd, selectors.EVENT_READ, "signal")
        self.last = time.monotonic()  # idle from now, not from before the imports
        next_check = time.monotonic() + STAMP_CHECK
        while not (self.stopping and not self.conns):
            timeout = max(0.0, min(self.last + self.idle, next_check) - time.monotonic())
            for key, _ in self.sel.select(timeout if not self.conns else None):
                if key.data == "signal":
                    got = os.read(rfd, 512)
                    log(f"signal {list(got)}: stopping once the running calls end")
                    self.stop()
                elif key.data is None:
                    self.accept()
                elif key.data[0] == "conn":
                    self.readable(key.data[1])
                else:
                    self.reap(key.data[1])
            now = time.monotonic()
            if not self.conns and not self.stopping:
                if now >= self.last + self.idle:
                    log(f"idle for {self.idle / 60:g} min: exiting")
                    self.stop()
                elif now >= next_check:
                    next_check = now + STAMP_CHECK
                    if stamp.compute() != self.stamp:
                        log("picobot or its dependencies changed: exiting")
                        self.stop()
        self.unbind()
        log(f"exit after {self.served} calls")
        return 0

    def stop(self) -> None:
        """Stop listening and let go of the lock: a replacing server may start at once,
        while the calls running here (an editor's `acp` session may last hours) end."""
        self.stopping = True
        self.unbind()
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1

    def accept(self) -> None:
        assert self.listener is not None
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        from picobot_tui.warm.client import peer_uid

        if peer_uid(sock) != os.getuid():
            log("refused a connection from another uid")
            sock.close()
            return
        self.last = time.monotonic()
        try:
            sock.setblocking(True)
            hello = {"stamp": self.stamp, "pid": os.getpid()}
            wire.send(sock, {**hello, "env_names": self.env_names, "env": self.env})
        except OSError:
            sock.close()
            return
        sock.setblocking(False)
        conn = Conn(sock)
        self.conns.add(conn)
        self.sel.register(sock, selectors.EVENT_READ, ("conn", conn))

    def drop(self, conn: Conn) -> None:
        for fd in conn.fds:
            os.close(fd)
        conn.fds = []
        if not conn.gone:
            conn.gone = True
            self.sel.unregister(conn.sock)
            self.conns.discard(conn)
            conn.sock.close()

    def readable(self, conn: Conn) -> None:
        try:
            if conn.state == "lead":
                data, fds, _, _ = socket.recv_fds(conn.sock, 1, MAX_FDS)
                conn.fds = list(fds)
                self.lead(conn, data)
                return
            data = conn.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.client_gone(conn)
            return
        try:
            frames = conn.reader.feed(data)
        except wire.WireError as e:
            log(f"bad frame: {e}")
            self.client_gone(conn)
            return
        for frame in frames:
            if conn.state == "request":
                self.fork(conn, frame)
            elif conn.state == "running" and "kill" in frame:
                with contextlib.suppress(OSError, ValueError):
                    signal.pidfd_send_signal(conn.pidfd, int(frame["kill"]))

    def lead(self, conn: Conn, data: bytes) -> None:
        if data == wire.RUN and conn.fds:
            conn.state = "request"
        elif data == wire.STATUS:
            self.reply(conn, self.status())
        elif data == wire.STALE:
            log("a client found this server stale: exiting")
            self.reply(conn, {"stopping": True})
            self.stop()
        elif data == wire.STOP:
            log("asked to stop")
            self.reply(conn, {"stopping": True})
            self.stop()
        else:
            self.drop(conn)

    def reply(self, conn: Conn, obj: Any) -> None:
        try:
            conn.sock.setblocking(True)
            wire.send(conn.sock, obj)
        except OSError:
            pass
        self.drop(conn)

    def client_gone(self, conn: Conn) -> None:
        """The client closed or was killed: a running child goes too."""
        if conn.state == "running" and conn.pidfd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(conn.pidfd, signal.SIGKILL)
            if not conn.gone:
                self.sel.unregister(conn.sock)
                conn.sock.close()
                conn.gone = True
            return  # kept in self.conns until reaped
        self.drop(conn)

    def fork(self, conn: Conn, request: dict[str, Any]) -> None:
        if self.stopping or len(request.get("fds", [])) + 1 != len(conn.fds):
            self.reply(conn, {"error": "stopping" if self.stopping else "bad fds"})
            return
        pid = os.fork()
        if pid == 0:  # the child: never returns into the loop
            code = 1
            try:
                child.become(request, conn.fds, self.env_effects)
                code = child.run(self.call, learn.path_for(self.path))
            finally:
                os._exit(code)
        self.served += 1
        for fd in conn.fds:
            os.close(fd)
        conn.fds = []
        conn.pid, conn.pidfd, conn.state = pid, os.pidfd_open(pid), "running"
        self.by_pidfd[conn.pidfd] = conn
        self.sel.register(conn.pidfd, selectors.EVENT_READ, ("child", conn))
        try:
            conn.sock.setblocking(True)
            wire.send(conn.sock, {"child": pid})
            conn.sock.setblocking(False)
        except OSError:
            self.client_gone(conn)

    def reap(self, conn: Conn) -> None:
        _, status = os.waitpid(conn.pid, 0)
        self.sel.unregister(conn.pidfd)
        os.close(conn.pidfd)
        self.by_pidfd.pop(conn.pidfd, None)
        self.last = time.monotonic()
        if os.WIFSIGNALED(status):
            msg = {"signal": os.WTERMSIG(status)}
        else:
            msg = {"exit": os.waitstatus_to_exitcode(status)}
        if conn.gone:
            self.conns.discard(conn)
        else:
            self.reply(conn, msg)
        if not self.conns and not self.stopping:
            self.learn()

    def learn(self) -> None:
        """Import what calls were seen to import lazily and this server has not: done
        while no call runs, so the next fork has them (learn.py)."""
        from picobot_tui.warm.preload import (
            ForkUnsafe,
            check_fork_safe,
            env_effects,
            freeze,
            import_all,
            recording_env_reads,
        )

        path = learn.path_for(self.path)
        names = [n for n in learn.read(path) if n not in sys.modules]
        if not names:
            return
        with recording_env_reads() as reads:
            done = import_all(names)
        try:
            check_fork_safe()
        except ForkUnsafe as e:
            log(f"a learned module broke fork safety ({e}): forgetting them, exiting")
            learn.forget(path)
            self.stop()
            return
        freeze()
        self.env_names = sorted(set(self.env_names) | reads)
        self.env = stamp.env_digest(self.env_names, self.env_before)
        self.env_effects = env_effects(self.env_before)
        log(f"learned {done} of {len(names)} modules calls import")

    def status(self) -> dict[str, Any]:
        rss = 0
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
        except OSError:
            pass
        return {
            "pid": os.getpid(),
            "rss_kib": rss,
            "stamp": self.stamp,
            "uptime": time.time() - self.started,
            "running": sum(1 for c in self.conns if c.state == "running"),
            "served": self.served,
            "idle_minutes": self.idle / 60,
            "socket": self.path,
            "python": sys.executable,
        }


def take_lock(path: str) -> int | None:
    """The server's lock (held for its life), waiting for an exiting one; None if taken."""
    fd = os.open(place.lock_path(path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)  # polling a lock held by another process: no event to wait on


def serve(path: str, idle_minutes: float, call: Callable[[], object]) -> int:
    """Run a server on `path` until idle, stale or stopped; `call` is the cold entry."""
    from picobot_tui.warm.preload import ForkUnsafe, preload

    lock = take_lock(path)
    if lock is None:
        log("another server holds the lock: not starting")
        return 0
    server = Server(path, idle_minutes, call)
    server.lock = lock
    t0 = time.monotonic()
    learned = learn.read(learn.path_for(path))
    try:
        names = preload(learned)
    except ForkUnsafe as e:
        log(f"not serving: {e}; the learned modules are forgotten for the next start")
        learn.forget(learn.path_for(path))
        return 1
    from picobot_tui.warm.preload import env_effects

    server.env_names = sorted(names)
    server.env = stamp.env_digest(server.env_names, server.env_before)
    server.env_effects = env_effects(server.env_before)
    server.bind()
    took = time.monotonic() - t0
    log(f"ready: {len(sys.modules)} modules ({len(learned)} learned) in {took:.1f} s")
    log(f"stamp {server.stamp}")
    log(f"the imports read {len(names)} environment variables (a client must match them)")
    try:
        return server.run()
    finally:
        server.stop()

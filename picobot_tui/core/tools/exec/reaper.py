"""Runs one command as a child subreaper, so nothing it starts outlives it (unsandboxed exec).

Without bubblewrap there is no PID namespace to end everything at once, and a process group
is not enough: `setsid cmd &`, `setsid -f`, a double fork or a daemon leaves the group. This
helper sits between picobot and the shell:

- `PR_SET_CHILD_SUBREAPER`: every orphan below it is re-parented to it, not to init, so it
  can always find what the shell left (whatever session or group it moved to);
- when the shell exits, it kills what is left (children, then the orphans they leave, until
  none is left) and reports `<exit code> <killed>` on the status fd;
- on SIGTERM/SIGINT/SIGHUP (picobot's timeout or cancellation) it does the same at once;
- `PR_SET_PDEATHSIG(SIGTERM)`: if picobot dies, the kernel sends it SIGTERM, so a killed
  picobot leaves nothing running either.

Limit: a SIGKILL of this helper itself (not of picobot) skips the clean-up; descendants then
go to init. picobot never sends it SIGKILL before SIGTERM has had its chance.

Usage: `python -I -S reaper.py PARENT_PID STATUS_FD -- argv...`. Stdlib only, run by path:
it must start fast and import nothing of picobot.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 1000  # bound on kill rounds (a fork bomb keeps adding children)


def _children() -> list[int]:
    me = os.getpid()
    try:  # needs CONFIG_PROC_CHILDREN (on in every distribution kernel)
        with open(f"/proc/{me}/task/{me}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        pass
    out = []
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc (not Linux): only the process group kill remains
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            out.append(int(name))
    return out


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all() -> int:
    """Kill every descendant (they come to us as their parents die); return how many."""
    killed: set[int] = set()
    for _ in range(_ROUNDS):
        kids = _children()
        if not kids:
            break
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        for pid in kids:  # wait for these, so their orphans have been re-parented to us
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    _reap()
    return len(killed)


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: reaper.py PARENT_PID STATUS_FD -- argv...", file=sys.stderr)
        return 2
    parent, status_fd, command = int(argv[1]), int(argv[2]), argv[4:]
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is not None:  # Linux; elsewhere picobot's process-group kill is all there is
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # picobot died before PDEATHSIG was armed
        return 1

    def stop(signum: int, frame: object) -> None:
        kill_all()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    pid = os.fork()
    if pid == 0:
        os.close(status_fd)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execv(command[0], command)
        except OSError as e:
            print(f"cannot run {command[0]}: {e}", file=sys.stderr)
        os._exit(127)
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            break
    code = os.waitstatus_to_exitcode(status)
    killed = kill_all()
    os.write(status_fd, f"{code} {killed}\n".encode())
    os.close(status_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Files only the user may read: directories made 0700, files opened 0600 (whatever the
umask), and writes that never stop short. Sessions, traces, logs and exports use these."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and missing parents) as 0700, and tighten `path` itself to 0700."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue
        os.chmod(d, 0o700)  # mkdir's mode is filtered by the umask
    st = os.stat(path)
    if stat.S_IMODE(st.st_mode) != 0o700 and st.st_uid == os.getuid():
        os.chmod(path, 0o700)


def open_private(path: Path, flags: int) -> int:
    """os.open with mode 0600, fixing the mode of files made under a loose umask (or older)."""
    fd = os.open(path, flags | os.O_CLOEXEC, 0o600)
    try:
        st = os.fstat(fd)
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write every byte (a regular file only writes short on a full disk or a signal)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]

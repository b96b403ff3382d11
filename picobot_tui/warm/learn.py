"""The modules calls import lazily, learned so the server can import them first.

A cold `agent -m` imports ~90 modules after LiteLLM itself, at its first model call
(provider configs, anyio's backend, tiktoken's encoding, picobot's tools): measured here,
a warm child spent 0.80 s in the call without them and 0.17 s with them imported. Which
ones depends on the provider and the tools used, so no fixed list: each child appends the
names it imported to `<socket>.modules`, and the server imports them when it is idle and
when it next starts (preload.py checks that nothing they start can break a fork).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable

MAX_BYTES = 1 << 20
"""The file stops growing at 1 MiB (a few thousand names: every provider's modules)."""


def path_for(sock: str) -> str:
    return sock[: -len(".sock")] + ".modules"


def read(path: str) -> list[str]:
    """The names learned so far, in the order first seen (missing file: none)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_BYTES)
    except OSError:
        return []
    return list(dict.fromkeys(n for n in text.split() if n.isidentifier() or "." in n))


def new_since(before: Iterable[str]) -> list[str]:
    """Modules imported since `before` was taken (a child's, at its exit)."""
    seen = set(before)
    return sorted(n for n in sys.modules if n not in seen and not n.startswith("__"))


def record(path: str, names: list[str]) -> None:
    """Append `names` in one write (O_APPEND: children writing at once do not interleave
    lines of this size); nothing past MAX_BYTES."""
    if not names:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        if os.fstat(fd).st_size < MAX_BYTES:
            os.write(fd, ("\n".join(names) + "\n").encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def forget(path: str) -> None:
    """Drop what was learned (one of the names started a thread)."""
    with contextlib.suppress(OSError):
        os.unlink(path)

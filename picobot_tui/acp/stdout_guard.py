"""Nothing but JSON-RPC on stdout.

`claim()` runs before anything else of `picobot acp` is imported: it keeps a private
duplicate of the real stdout descriptor for the protocol and points fd 1 (and `sys.stdout`)
at stderr. A stray `print`, a library warning, or a child process (exec, an MCP server)
writing to its inherited stdout then lands on stderr, never inside the protocol stream.
"""

from __future__ import annotations

import contextlib
import os
import sys

_claimed: int | None = None


def claim() -> int:
    """The descriptor the protocol writes to (a duplicate of the original fd 1, not
    inherited by child processes); fd 1 and `sys.stdout` now go to stderr. Idempotent."""
    global _claimed
    if _claimed is not None:
        return _claimed
    if sys.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
    protocol_fd = os.dup(1)  # os.dup makes it non-inheritable
    os.dup2(2, 1)  # fd 1 is stderr now, for this process and every child it starts
    sys.stdout = sys.stderr
    _claimed = protocol_fd
    return protocol_fd

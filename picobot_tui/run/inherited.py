"""The signals picobot's caller left ignored, kept ignored.

A shell without job control starts `picobot … &` with SIGINT and SIGQUIT ignored, and
`nohup` ignores SIGHUP, so that a Ctrl-C or a hang-up meant for something else does not
end the job. POSIX programs keep such a signal ignored (Python itself leaves an ignored
SIGINT alone), so picobot installs no handler of its own for one: not the headless
turn's cancel, not the TUI's or ACP's exit, not the SIGTERM exit code. The set is read
once, when this module is first imported, before any handler is installed; the warm
client sends it with the call and the forked child adopts it (warm/child.py), so a warm
call ignores what a cold one would.

Stdlib only: the warm client imports it before Typer, pydantic or LiteLLM.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable


def _now_ignored() -> frozenset[int]:
    out = set()
    for sig in signal.valid_signals():
        try:
            if signal.getsignal(sig) == signal.SIG_IGN:
                out.add(int(sig))
        except (OSError, ValueError):
            continue
    return frozenset(out)


_ignored = _now_ignored()


def ignored() -> frozenset[int]:
    """Every signal ignored when picobot started (SIGPIPE and SIGXFSZ always: Python
    ignores those two itself)."""
    return _ignored


def is_ignored(sig: int) -> bool:
    """Whether the caller left `sig` ignored: then picobot installs no handler for it."""
    return int(sig) in _ignored


def adopt(signals: Iterable[int]) -> None:
    """Take the caller's set as this process's own (the warm child, forked from a server
    started elsewhere), and ignore each of them here too."""
    global _ignored
    _ignored = frozenset(int(s) for s in signals)
    for sig in _ignored:
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):  # SIGKILL/SIGSTOP, or a number this system lacks
            continue

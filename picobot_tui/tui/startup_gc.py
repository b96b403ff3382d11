"""The cyclic garbage collector is paused while the TUI starts: start-up allocates hundreds
of thousands of objects (modules, classes, styles) and frees almost none, so the collections
it triggers are wasted work, ~12 ms before the first frame (bench #1)."""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collections until `resume()`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect again (idempotent). What start-up built is frozen out of the collector's
    sight: it lives as long as the process, and full collections stay short. Its garbage
    is collected first, or freezing would keep it for good."""
    global _paused
    if _paused:
        _paused = False
        gc.collect()
        gc.freeze()
        gc.enable()

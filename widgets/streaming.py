"""How streamed answer text goes into the transcript: when (`append_delay`, which waits a
little behind the user's key presses) and how much of it is final (`settled_prefix`, the part
that can move into a frozen block)."""

from __future__ import annotations

import re

_FENCE_OPEN_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_LIST_ITEM_RE = re.compile(r"[-*+] |\d{1,9}[.)] ")

FREEZE_AT = 1500
"""While an answer streams, the live Static re-renders its text on every append; once this
many characters of finished markdown blocks sit in it they move into a frozen Static of
their own, so each append re-renders at most a few blocks (a 20,000-token answer took 2x
the CPU of headless before, and input lagged)."""

TYPING_PAUSE = 0.3
"""Seconds without a key press after which the user is not typing: streamed text goes in as
it comes. A `TypingMonitor` passed to the block gives the last key press."""
AFTER_KEY = 0.03
"""While the user types, streamed text goes in only once the last key's frame is painted
and at most this long after the key (seconds). Each append costs a layout pass and a render
(20-40 ms); a key arriving meanwhile, or one whose frame is not painted yet, waits behind it.
Just after a key's frame, the next key is most likely 50 ms or more away (bench #5). Text
held back to the end of a pause went in just as the next key came: p95 ~45 ms."""
KEY_HOLD_MAX = 2.0
"""Streamed text is never held back longer than this (seconds)."""


def append_delay(since_key: float | None, held: float, *, key_painted: bool = True) -> float:
    """Seconds to wait before appending streamed text (0: now), given the seconds since the
    last key press (None: none yet), how long the text has been held back already, and
    whether that key's frame has been painted."""
    if since_key is None or since_key >= TYPING_PAUSE or held >= KEY_HOLD_MAX:
        return 0.0
    if key_painted and since_key <= AFTER_KEY:
        return 0.0
    return 0.003 if since_key <= AFTER_KEY else 0.005  # look again soon


def settled_prefix(text: str) -> int:
    """Length of the longest prefix of streamed markdown that ends at a block boundary later
    text cannot change: a blank line outside fenced code, followed by a line that starts
    at the margin and is not a list item (which could continue a list above it)."""
    end = 0
    pos = 0
    fence: str | None = None
    blank_at: int | None = None  # end of the last blank line outside a fence
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # still arriving
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        elif not line.strip():
            blank_at = pos + len(line)
        else:
            if blank_at is not None and not line[0].isspace() and not _LIST_ITEM_RE.match(line):
                end = blank_at
            blank_at = None
            m = _FENCE_OPEN_RE.match(line)
            if m:
                fence = m.group(1)
        pos += len(line)
    return end

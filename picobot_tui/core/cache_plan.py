"""Where a call's prompt is worth caching: the breakpoints of providers that cache only where
they are told (Anthropic, and Claude on Bedrock and Vertex). The client marks them
(core/llm/cache_markers.py) or ignores them for providers that cache by themselves.

A breakpoint writes the prefix up to it (1.25x the input price for 5 minutes, 2x for an
hour) so a later call reads it (0.1x). It pays only where a later call sends the same
prefix: the system prompt (the tools come before it in the provider's order), the end of
the kept head after a compaction (the head and summary stay while the window moves), the
newest message of the call (the next call of the turn, or the next turn, starts with all of
it), and the previous call's newest message when this call starts with that call's prompt
(so the read is found however many blocks a tool round added). A call whose prompt is never
sent again (a summary call, a one-shot turn with no further call) gets none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picobot_tui.core.budget import is_compacted

MAX_BREAKPOINTS = 4
"""Anthropic refuses a request with more (HTTP 400)."""
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
"""How long a marked prefix stays cached after its last use (`cache.ttl`)."""

Message = dict[str, Any]


def breakpoints(messages: Sequence[Message], previous: Sequence[Message] = ()) -> tuple[int, ...]:
    """The indexes of `messages` (a request: the system prompt first) to mark, at most four.
    `previous` is the last request's messages, to find where its newest one is now."""
    if not messages:
        return ()
    newest = len(messages) - 1
    marks = {0, newest}
    summary = max((i for i, m in enumerate(messages) if i and is_compacted(m)), default=None)
    if summary is not None:
        marks.add(summary)
    end = len(previous) - 1
    if 0 < end < newest and list(messages[: len(previous)]) == list(previous):
        marks.add(end)
    # Four at most: the previous call's end is the one to give up (the newest reads it
    # through the provider's lookback when the round was small).
    if len(marks) > MAX_BREAKPOINTS:
        marks.discard(end)
    return tuple(sorted(marks))

"""A session's checkpoints in order, a branch's inherited from its parent.

`load_timeline(store, key)` reads the session's records; a branch (a `lineage` record,
written by `branch.py`) starts with its parent's changes of the turns before `forked_at`
(turn numbers line up: the branch holds exactly those turns), then its own.
`Timeline.turn_stats()` gives each turn's `files, +added −removed` for a rewind list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from picobot_tui.core.checkpoints.records import Change, Uncheckpointed, parse_records
from picobot_tui.core.checkpoints.store import CheckpointStore

MAX_DEPTH = 64  # branches of branches: deeper than this is a loop, not a history


@dataclass
class Timeline:
    key: str
    changes: list[Change] = field(default_factory=list)
    uncheckpointed: list[Uncheckpointed] = field(default_factory=list)
    parent: str | None = None
    forked_at: int | None = None

    def since(self, turn: int) -> list[Change]:
        """The changes of turn `turn` and every later one, in order."""
        return [c for c in self.changes if c.turn >= turn]

    def in_turn(self, turn: int) -> list[Change]:
        return [c for c in self.changes if c.turn == turn]

    def uncheckpointed_since(self, turn: int) -> list[Uncheckpointed]:
        return [u for u in self.uncheckpointed if u.turn >= turn]


def load_timeline(store: CheckpointStore, key: str) -> Timeline:
    """The session's changes (its parents' first, for a branch); no records: empty."""
    own_changes, own_skipped, lineage = parse_records(store.records(key))
    timeline = Timeline(key)
    if lineage is not None:
        timeline.parent, timeline.forked_at = lineage
    levels: list[tuple[list[Change], list[Uncheckpointed], int | None]] = [
        (own_changes, own_skipped, None)
    ]
    seen = {key}
    limit: int | None = None
    while lineage is not None and len(levels) < MAX_DEPTH and lineage[0] not in seen:
        parent, forked_at = lineage
        limit = forked_at if limit is None else min(limit, forked_at)
        seen.add(parent)
        changes, skipped, lineage = parse_records(store.records(parent))
        levels.append((changes, skipped, limit))
    for changes, skipped, below in reversed(levels):
        timeline.changes += [c for c in changes if below is None or c.turn < below]
        timeline.uncheckpointed += [u for u in skipped if below is None or u.turn < below]
    return timeline

"""A session's checkpoints in order.

`load_timeline(store, key)` reads the session's records. A branch holds its own copy of the
records of the turns it took from its parent (`rewind.branch_session` copies them), so it
can rewind into them after the parent is deleted; its `lineage` record names the parent
and `forked_at`. `Timeline.since(turn)`, `.in_turn(turn)` select changes by turn.
`skipped_line(u, what)` is how every front end says a call was not checkpointed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from picobot_tui.core.checkpoints.records import Change, Uncheckpointed, parse_records
from picobot_tui.core.checkpoints.store import CheckpointStore
from picobot_tui.core.visible import label


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
    """The session's changes in order; a session without records has none."""
    changes, skipped, lineage = parse_records(store.records(key))
    timeline = Timeline(key, changes, skipped)
    if lineage is not None:
        timeline.parent, timeline.forked_at = lineage
    return timeline


def skipped_line(skipped: Uncheckpointed, what: str) -> str:
    """ "turn 2: exec (call_2) was not checkpointed (why): `what`", naming the paths when
    only those were not (nested repositories)."""
    head = f"turn {skipped.turn}: {skipped.tool} ({label(skipped.call, exact=True)})"
    if skipped.paths:
        names = ", ".join(label(p, exact=True) for p in skipped.paths)
        return f"{head} changed {names}, not checkpointed ({skipped.reason}): {what}"
    return f"{head} was not checkpointed ({skipped.reason}): {what}"

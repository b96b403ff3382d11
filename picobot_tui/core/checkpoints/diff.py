"""What changed, file by file: per turn or per session, with +/− counts and unified diffs.

`file_diffs(store, timeline, turn=None)` compares, for each file changed in turn `turn`
(every turn when None), its state before the first of those changes with its state after
the last. A `FileDiff` carries `added`/`removed` line counts and `text`, a unified diff with
`a/` and `b/` paths relative to the workspace (what `patch -p1` and `git apply` take): new
files come from `/dev/null`, deleted ones go to it, binary or non-UTF-8 contents and changes
that were not kept say so in one line (`Binary files … differ`, as git writes it).
`turn_stats(store, timeline)` gives `{turn: TurnStats(files, added, removed)}` for a list of
turns (`3 files, +40 −12`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from picobot_tui.core.checkpoints.records import Change, FileState
from picobot_tui.core.checkpoints.store import CheckpointError, CheckpointStore
from picobot_tui.core.checkpoints.timeline import Timeline


@dataclass(frozen=True)
class FileDiff:
    path: Path
    shown: str
    before: FileState
    after: FileState
    added: int
    removed: int
    text: str
    binary: bool = False

    @property
    def undoable(self) -> bool:
        return self.before.restorable


@dataclass(frozen=True)
class TurnStats:
    files: int
    added: int
    removed: int

    def __str__(self) -> str:
        noun = "file" if self.files == 1 else "files"
        return f"{self.files} {noun}, +{self.added} −{self.removed}"


def _text(store: CheckpointStore, state: FileState) -> str | None:
    """The state's text ("" when absent), None when it is not UTF-8 text or not kept."""
    if state.kind == "absent":
        return ""
    if state.kind != "file" or state.sha is None:
        return None
    try:
        data = store.get(state.sha)
    except CheckpointError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def diff_states(
    store: CheckpointStore, shown: str, path: Path, old: FileState, new: FileState
) -> FileDiff:
    """The diff of one file from state `old` to `new`."""
    a = "/dev/null" if old.kind == "absent" else f"a/{shown}"
    b = "/dev/null" if new.kind == "absent" else f"b/{shown}"
    header = f"diff --git a/{shown} b/{shown}\n"
    if old.kind == "absent" and new.kind != "absent":
        header += f"new file mode {_mode(new)}\n"
    elif new.kind == "absent" and old.kind != "absent":
        header += f"deleted file mode {_mode(old)}\n"
    elif old.mode != new.mode and old.kind == new.kind == "file":
        header += f"old mode {_mode(old)}\nnew mode {_mode(new)}\n"
    old_text, new_text = _text(store, old), _text(store, new)
    if old_text is None or new_text is None:
        if old.same_content(new) or (old.sha is not None and old.sha == new.sha):
            return FileDiff(path, shown, old, new, 0, 0, header, False)
        body = f"Binary files {a} and {b} differ\n"
        return FileDiff(path, shown, old, new, 0, 0, header + body, True)
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    added = removed = 0
    out = []
    for line in difflib.unified_diff(old_lines, new_lines, a, b, n=3):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    text = "".join(out)
    if not text and old_text == new_text and old.kind == new.kind:
        return FileDiff(path, shown, old, new, 0, 0, header if "mode" in header else "")
    return FileDiff(path, shown, old, new, added, removed, header + text)


def _mode(state: FileState) -> str:
    if state.kind == "link":
        return "120000"
    return "100755" if (state.mode or 0) & 0o100 else "100644"


def _spans(changes: list[Change]) -> list[tuple[Change, FileState]]:
    """(first change, the state after the last) of each file, in first-change order."""
    first: dict[Path, Change] = {}
    last: dict[Path, FileState] = {}
    for c in changes:
        first.setdefault(c.path, c)
        last[c.path] = c.after
    return [(c, last[p]) for p, c in first.items()]


def file_diffs(
    store: CheckpointStore, timeline: Timeline, turn: int | None = None
) -> list[FileDiff]:
    """One diff per file changed in `turn` (every turn when None). Blocking."""
    changes = timeline.changes if turn is None else timeline.in_turn(turn)
    diffs = []
    for first, after in _spans(changes):
        d = diff_states(store, first.shown, first.path, first.before, after)
        if d.text:
            diffs.append(d)
    return diffs


def turn_stats(store: CheckpointStore, timeline: Timeline) -> dict[int, TurnStats]:
    """Files and +/− lines each turn changed (turns that changed nothing are left out)."""
    stats: dict[int, TurnStats] = {}
    for turn in sorted({c.turn for c in timeline.changes}):
        diffs = file_diffs(store, timeline, turn)
        if diffs:
            stats[turn] = TurnStats(
                len(diffs), sum(d.added for d in diffs), sum(d.removed for d in diffs)
            )
    return stats


def patch_text(diffs: list[FileDiff]) -> str:
    """The diffs as one patch (what `sessions diff` prints to a pipe)."""
    return "".join(d.text for d in diffs)

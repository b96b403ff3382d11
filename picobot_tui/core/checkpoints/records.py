"""What a checkpoint record says: the state of one file before and after one tool call.

A `FileState` is one of:

- `absent`: the file did not exist;
- `file`: a regular file, its bytes kept as a blob (`sha`, SHA-256) and its permission
  bits (`mode`);
- `link`: a symbolic link, its target kept as a blob;
- `unknown`: not kept (`reason`): over `checkpoints.maxFileBytes` (the change is "not
  undoable"), unreadable, or not a regular file. `sha` may still name what it was, so a later
  change is noticed, but nothing can be put back.

A `Change` is one file changed by one call: session key, turn (1-based: the Nth user
message), tool-call id, tool name, workspace and absolute path, `before` and `after`, and
`seq`, its order in the session. An exec call that could not be snapshotted is recorded as
an `Uncheckpointed` (reason: git missing, too many files…); one with `paths` was
checkpointed but for those (nested git repositories).

Record lines (store.py keeps them):

    {"type":"change","seq":1,"turn":2,"call":"call_1","tool":"edit_file",
     "ws":"/abs/ws","path":"/abs/ws/a.py","before":{"kind":"file","sha":"…","mode":420,
     "size":12},"after":{…}}
    {"type":"uncheckpointed","turn":2,"call":"call_2","tool":"exec","reason":"…"}
    {"type":"uncheckpointed",…,"reason":"a nested git repository","paths":["vendor"]}
    {"type":"lineage","parent":"cli:…","forked_at":3}        (first line of a branch)
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from picobot_tui.core.checkpoints.store import CheckpointStore, sha256
from picobot_tui.core.visible import label

Kind = Literal["absent", "file", "link", "unknown"]


@dataclass(frozen=True)
class FileState:
    kind: Kind
    sha: str | None = None
    mode: int | None = None
    size: int = 0
    reason: str | None = None
    dirs: tuple[str, ...] | None = None
    """`absent` only: the folders above the file that did not exist either, deepest first
    (a restore removes them again when they are empty)."""

    @property
    def restorable(self) -> bool:
        return self.kind != "unknown"

    def same_content(self, other: FileState) -> bool:  # folders left aside
        """Whether both name the same thing on disk (kind, bytes and mode)."""
        if self.kind != other.kind:
            return False
        if self.kind == "absent":
            return True
        return self.sha is not None and self.sha == other.sha and self.mode == other.mode

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        if self.dirs is not None:
            out["dirs"] = list(self.dirs)
        return out

    @staticmethod
    def from_json(obj: Any) -> FileState:
        if not isinstance(obj, dict) or obj.get("kind") not in ("absent", "file", "link"):
            reason = obj.get("reason") if isinstance(obj, dict) else None
            sha = obj.get("sha") if isinstance(obj, dict) else None
            return FileState("unknown", sha if isinstance(sha, str) else None, reason=reason)
        mode = obj.get("mode")
        dirs = obj.get("dirs")
        return FileState(
            obj["kind"],
            obj.get("sha") if isinstance(obj.get("sha"), str) else None,
            mode if isinstance(mode, int) else None,
            int(obj.get("size") or 0),
            obj.get("reason"),
            tuple(str(d) for d in dirs) if isinstance(dirs, list) else None,
        )


ABSENT = FileState("absent")


@dataclass(frozen=True)
class Change:
    seq: int
    turn: int
    call: str
    tool: str
    workspace: Path
    path: Path
    before: FileState
    after: FileState

    @property
    def undoable(self) -> bool:
        return self.before.restorable

    @property
    def shown(self) -> str:
        """The path relative to the workspace when inside it, as a `label`: the model names
        the files it writes, and a name holding a newline or U+202E printed a forged line
        (`Restored 0 file(s)`) or a reversed one in `sessions diff` and `rewind`."""
        if self.path.is_relative_to(self.workspace):
            return label(str(self.path.relative_to(self.workspace)), exact=True)
        return label(str(self.path), exact=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "change",
            "seq": self.seq,
            "turn": self.turn,
            "call": self.call,
            "tool": self.tool,
            "ws": str(self.workspace),
            "path": str(self.path),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Change | None:
        try:
            return Change(
                int(obj["seq"]),
                int(obj["turn"]),
                str(obj["call"]),
                str(obj["tool"]),
                Path(obj["ws"]),
                Path(obj["path"]),
                FileState.from_json(obj.get("before")),
                FileState.from_json(obj.get("after")),
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Uncheckpointed:
    turn: int
    call: str
    tool: str
    reason: str
    paths: tuple[str, ...] = ()  # only these were not checkpointed (relative to the workspace)


def read_state(
    path: Path, max_bytes: int, store: CheckpointStore | None = None, *, dir_fd: int | None = None
) -> FileState:
    """The state of `path` now, its bytes kept in `store` (when given and small enough).
    Never follows a final symbolic link. With `dir_fd`: `path.name` in that folder (one a
    restore reached without following links, confined.py). Blocking."""
    where: str | Path = path.name if dir_fd is not None else path
    try:
        st = os.stat(where, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT if dir_fd is not None else absent(path)
    except OSError as e:
        return FileState("unknown", reason=f"cannot read it: {e.strerror or e}")
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.fsencode(os.readlink(where, dir_fd=dir_fd))
        except OSError as e:
            return FileState("unknown", reason=f"cannot read the link: {e.strerror or e}")
        sha = store.put(target) if store is not None else sha256(target)
        return FileState("link", sha, mode, len(target))
    if not stat.S_ISREG(st.st_mode):
        return FileState("unknown", reason="not a regular file")
    if st.st_size > max_bytes:
        return FileState(
            "unknown",
            mode=mode,
            size=st.st_size,
            reason=f"{st.st_size:,} bytes, over checkpoints.maxFileBytes ({max_bytes:,})",
        )
    try:
        # O_NOFOLLOW: a link put there since the lstat is not read through.
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError as e:
        return FileState("unknown", reason=f"cannot read it: {e.strerror or e}")
    return state_of_bytes(data, mode, max_bytes, store)


def absent(path: Path) -> FileState:
    """`path` does not exist: with the folders above it that do not exist either."""
    missing = []
    parent = path.parent
    while parent != parent.parent and not os.path.lexists(parent):
        missing.append(str(parent))
        parent = parent.parent
    return FileState("absent", dirs=tuple(missing)) if missing else ABSENT


def state_of_bytes(
    data: bytes, mode: int, max_bytes: int, store: CheckpointStore | None, kind: Kind = "file"
) -> FileState:
    """The state of a file holding `data`, kept in `store` when given and within limits."""
    sha = sha256(data)
    if len(data) > max_bytes:
        return FileState(
            "unknown",
            sha,
            mode,
            len(data),
            f"{len(data):,} bytes, over checkpoints.maxFileBytes ({max_bytes:,})",
        )
    if store is not None:
        store.put(data, sha)
    return FileState(kind, sha, mode, len(data))


def parse_records(
    lines: list[dict[str, Any]],
) -> tuple[list[Change], list[Uncheckpointed], tuple[str, int] | None]:
    """(changes, uncheckpointed calls, (parent, forked_at) of a branch) from record lines."""
    changes: list[Change] = []
    skipped: list[Uncheckpointed] = []
    lineage: tuple[str, int] | None = None
    for obj in lines:
        kind = obj.get("type")
        if kind == "change":
            change = Change.from_json(obj)
            if change is not None:
                changes.append(change)
        elif kind == "uncheckpointed":
            try:
                paths = obj.get("paths")
                skipped.append(
                    Uncheckpointed(
                        int(obj["turn"]),
                        str(obj["call"]),
                        str(obj["tool"]),
                        str(obj["reason"]),
                        tuple(str(p) for p in paths) if isinstance(paths, list) else (),
                    )
                )
            except (KeyError, TypeError, ValueError):
                continue
        elif kind == "lineage" and isinstance(obj.get("parent"), str):
            try:
                lineage = (obj["parent"], int(obj["forked_at"]))
            except (KeyError, TypeError, ValueError):
                continue
    return changes, skipped, lineage

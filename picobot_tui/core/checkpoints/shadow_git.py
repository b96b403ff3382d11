"""Snapshots of a whole workspace with a shadow git repository (for `exec`).

Real `git`, with its own repository under `<checkpoints>/git/<workspace id>/` and the
workspace as its work tree:

- every command runs with GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE set explicitly (the
  user's GIT_* variables are dropped), hooks off (`core.hooksPath=/dev/null`), no fsmonitor,
  no auto gc, no optional locks, no filters or line-ending conversion (`info/attributes`:
  the bytes are kept as they are); the user's `.git` is never opened for writing and no
  `status` runs in their repository (git skips a work tree's `.git` entries);
- the workspace's `.gitignore` files and the user's `core.excludesFile` are honoured;
- snapshots are incremental: `git add -A` compares stat data with the shadow index (a split
  index, so a write is small), so an unchanged tree costs a walk, then `git write-tree`
  names it;
- files over `checkpoints.maxFileBytes` are left out before `git add` hashes them (the new
  and stat-dirty paths `git ls-files -o -m` lists are `lstat`ed; big ones are excluded by
  pathspec), and nested git repositories (gitlinks: git keeps none of their files) are
  fingerprinted by a stat walk (left_out.py), so their changes are reported, not lost;
- one snapshot at a time per workspace (an flock), across picobot processes; a snapshot is
  bounded by a time budget (the exec timeout), past which it is not checkpointed.

`ShadowGit.snapshot(max_file_bytes, budget)` returns a `Snapshot` (tree id, big files,
nested repositories), or raises `NotCheckpointed` (git missing, the workspace over
`checkpoints.maxFiles`, git failing or over its budget): the caller marks the call "not
checkpointed". `changes(a, b)` lists what differs between two trees; `blobs(ids)` reads
their contents in one `git cat-file --batch`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from picobot_tui.core.checkpoints.left_out import BigFile, big_files, fingerprint, is_repository
from picobot_tui.core.private_files import ensure_private_dir, open_private

GIT_TIMEOUT = 120.0
_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.quotePath=false",
    "core.untrackedCache=true",
    # A split index: a snapshot rewrites a small file, not the ~700 KB of 10,000 entries
    # (bench 14b's snapshot: 47-49 -> 43 ms of CPU); old shared parts go at once (the flock
    # is held). Its header no longer counts every entry: ls-files' listing does.
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=now",
    "gc.auto=0",
    "advice.addEmbeddedRepo=false",
    "advice.addIgnoredFile=false",
    "maintenance.auto=false",
)
_ATTRIBUTES = b"* -text -eol -filter -ident -working-tree-encoding\n"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_BY_NAME = 500
"""Up to this many new or changed paths, `git add` is given their names (a pathspec each
is matched against every index entry: many are slower than one walk)."""


class NotCheckpointed(Exception):
    """Why a workspace cannot be snapshotted now; the message is shown once."""


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees: git modes (0 absent, 0o100644, 0o100755,
    0o120000 a link, 0o160000 a nested repository) and blob ids."""

    path: str
    old_mode: int
    old_id: str
    new_mode: int
    new_id: str


@dataclass(frozen=True)
class Snapshot:
    """The workspace at one moment: the shadow tree, the files left out of it for their size
    (by relative path) and the nested repositories' fingerprints (None: too many files)."""

    tree: str
    big: dict[str, BigFile] = field(default_factory=dict)
    nested: dict[str, str | None] = field(default_factory=dict)


def workspace_id(workspace: Path) -> str:
    return hashlib.sha256(os.fsencode(str(workspace))).hexdigest()[:16]


def git_exe() -> str | None:
    return shutil.which("git")


class ShadowGit:
    def __init__(self, git_root: Path, workspace: Path, max_files: int) -> None:
        self.workspace = Path(workspace)
        self.dir = Path(git_root) / workspace_id(self.workspace)
        self.max_files = max_files
        self._git = git_exe()
        self._ready = False
        self._last: tuple[tuple[int, int, int], str] | None = None  # (index stat, its tree)

    # ------------------------------------------------------------ running git

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.dir),
            GIT_WORK_TREE=str(self.workspace),
            GIT_INDEX_FILE=str(self.dir / "index"),
            GIT_OPTIONAL_LOCKS="0",
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            LC_ALL="C",
        )
        return env

    def _run(
        self,
        *args: str,
        input: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        deadline: float | None = None,
    ) -> bytes:
        assert self._git is not None
        timeout = GIT_TIMEOUT
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
            if timeout <= 0:
                raise NotCheckpointed("the snapshot took longer than the exec timeout")
        argv = [self._git]
        for item in _CONFIG:
            argv += ["-c", item]
        try:
            done = subprocess.run(
                [*argv, *args],
                cwd=self.workspace,
                env=self._env(),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            # git was killed holding the shadow index's lock; the flock says it is ours.
            (self.dir / "index.lock").unlink(missing_ok=True)
            raise NotCheckpointed(f"git {args[0]} took over {timeout:.0f} s") from None
        except OSError as e:
            raise NotCheckpointed(f"git {args[0]} failed: {e}") from None
        if done.returncode not in ok:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise NotCheckpointed(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return done.stdout

    def _init(self) -> None:
        if self._ready:
            return
        if self._git is None:
            raise NotCheckpointed("git is not installed, so exec calls are not checkpointed")
        ensure_private_dir(self.dir)
        if not (self.dir / "HEAD").exists():
            self._run("init", "--quiet")
        info = self.dir / "info"
        ensure_private_dir(info)
        attributes = info / "attributes"
        if not attributes.exists() or attributes.read_bytes() != _ATTRIBUTES:
            attributes.write_bytes(_ATTRIBUTES)
        # A workspace holding picobot's own folder (an explicit `--workspace ~`): never
        # snapshot the checkpoints themselves.
        exclude = b""
        own = self.dir.parent.parent
        if own.is_relative_to(self.workspace) and own != self.workspace:
            exclude = b"/" + os.fsencode(str(own.relative_to(self.workspace))) + b"/\n"
        path = info / "exclude"
        if not path.exists() or path.read_bytes() != exclude:
            path.write_bytes(exclude)
        self._ready = True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = open_private(self.dir / "picobot.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock

    # ------------------------------------------------------------ snapshots

    def snapshot(self, max_file_bytes: int, budget: float = GIT_TIMEOUT) -> Snapshot:
        """Record the workspace as it is now, within `budget` seconds. Blocking."""
        self._init()
        deadline = time.monotonic() + budget
        with self._locked():
            index = self.dir / "index"
            first = not index.exists()
            # One walk says what `git add -A` would hash (new files, "?"; tracked ones whose
            # stat data changed, "C") and which entries are nested repositories (gitlinks).
            out = self._run(
                "ls-files",
                "-z",
                "-t",
                "--stage",
                "--others",
                "--modified",
                "--exclude-standard",
                deadline=deadline,
            )
            new, changed, links, entries = _listing(out)
            if first and len(new) > self.max_files:
                raise self._too_many(len(new))
            big = big_files(self.workspace, [*new, *changed], max_file_bytes)
            todo = [p for p in [*new, *changed] if p not in big]
            if todo:
                self._add(todo, big, deadline)
            n = entries + len([p for p in todo if p in new])
            if n > self.max_files:
                index.unlink(missing_ok=True)
                raise self._too_many(n)
            tree = self._tree(index, deadline)
        # Nested repositories now: gitlinks still there, and new ones (shown as "dir/").
        nested = {p.rstrip("/") for p in [*links, *(p for p in new if p.endswith("/"))]}
        prints = {
            rel: fingerprint(self.workspace / rel, self.max_files)
            for rel in sorted(nested)
            if is_repository(self.workspace / rel)
        }
        return Snapshot(tree, big, prints)

    def _tree(self, index: Path, deadline: float) -> str:
        """`git write-tree`, skipped when the index is the one it last named (nothing to
        add: the usual snapshot before an exec)."""
        try:
            st = os.stat(index)
            stamp: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp is not None and self._last is not None and self._last[0] == stamp:
            return self._last[1]
        tree = self._run("write-tree", deadline=deadline).decode().strip()
        self._last = (stamp, tree) if stamp is not None else None
        return tree

    def _add(self, todo: list[str], big: dict[str, BigFile], deadline: float) -> None:
        """`git add -A` of the paths `todo` (a few: by name, so git looks at nothing else;
        many: the whole tree), never those in `big`."""
        whole = [".", *(":(exclude,literal,top)" + p for p in sorted(big))]
        if len(todo) <= _BY_NAME:
            try:
                self._add_specs([":(literal,top)" + p for p in todo], deadline)
                return
            except NotCheckpointed:
                # A tracked path now below a link (`rm -rf a; ln -s … a`): git refuses it by
                # name ("beyond a symbolic link"), so the whole tree is added instead.
                if time.monotonic() >= deadline:
                    raise
        self._add_specs(whole, deadline)

    def _add_specs(self, specs: list[str], deadline: float) -> None:
        # An unreadable file is left out (exit 1), not the whole snapshot.
        self._run(
            "add",
            "-A",
            "--ignore-errors",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            input=b"\0".join(os.fsencode(p) for p in specs),
            ok=(0, 1),
            deadline=deadline,
        )

    def entries(self, tree: str, paths: list[str]) -> dict[str, tuple[int, str]]:
        """(mode, blob id) of those of `paths` that tree `tree` holds."""
        if not paths or not tree or tree == _EMPTY_TREE:
            return {}
        out = self._run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", tree, "--", *paths)
        found = {}
        for entry in out.split(b"\0"):
            if b"\t" not in entry:
                continue
            meta, path = entry.split(b"\t", 1)
            mode, _kind, blob = meta.decode().split(" ")
            found[os.fsdecode(path)] = (int(mode, 8), blob)
        return found

    def _too_many(self, n: int) -> NotCheckpointed:
        return NotCheckpointed(
            f"the workspace holds {n:,} files, over checkpoints.maxFiles ({self.max_files:,}), "
            "so exec calls are not checkpointed"
        )

    def changes(self, old: str, new: str) -> list[TreeChange]:
        """What differs between trees `old` and `new` (renames are a delete and an add)."""
        if old == new:
            return []
        out = self._run("diff-tree", "-r", "-z", "--no-renames", "--raw", old or _EMPTY_TREE, new)
        parts = out.split(b"\0")
        found: list[TreeChange] = []
        i = 0
        while i + 1 < len(parts):
            meta, path = parts[i], parts[i + 1]
            i += 2
            if not meta.startswith(b":"):
                continue
            old_mode, new_mode, old_id, new_id, _status = meta[1:].decode().split(" ")
            found.append(
                TreeChange(os.fsdecode(path), int(old_mode, 8), old_id, int(new_mode, 8), new_id)
            )
        return found

    def folders(self, tree: str) -> set[str]:
        """Every folder tree `tree` holds (relative paths)."""
        if not tree or tree == _EMPTY_TREE:
            return set()
        out = self._run("ls-tree", "-r", "-d", "--name-only", "-z", tree)
        return {os.fsdecode(p) for p in out.split(b"\0") if p}

    def blobs(self, ids: list[str]) -> dict[str, bytes]:
        """The contents of blobs `ids` (missing ones left out), in one git call."""
        wanted = [i for i in dict.fromkeys(ids) if i and set(i) != {"0"}]
        if not wanted:
            return {}
        out = self._run("cat-file", "--batch", input="".join(f"{i}\n" for i in wanted).encode())
        found: dict[str, bytes] = {}
        pos = 0
        while pos < len(out):
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            pos = end + 1
            if len(header) < 3 or header[1] != "blob":
                continue  # "<id> missing"
            size = int(header[2])
            found[header[0]] = out[pos : pos + size]
            pos += size + 1
        return found


def _listing(out: bytes) -> tuple[list[str], list[str], list[str], int]:
    """(new paths, changed paths, gitlinks, index entries) from `git ls-files -z -t -s -o -m`:
    "? path", "H mode id stage\tpath" for every entry, "C …" again for a changed one. Found
    with `bytes.find`: the "H" lines of a big index are most of the output and none is read."""
    data = b"\0" + out
    return (
        _tagged(data, b"\0? ", False),
        _tagged(data, b"\0C ", True),
        _tagged(data, b"\0H 160000 ", True),
        data.count(b"\0H "),
    )


def _tagged(data: bytes, tag: bytes, staged: bool) -> list[str]:
    found = []
    pos = data.find(tag)
    while pos >= 0:
        end = data.find(b"\0", pos + 1)
        entry = data[pos + len(tag) : end if end >= 0 else len(data)]
        if staged:
            entry = entry.split(b"\t", 1)[1] if b"\t" in entry else b""
        if entry:
            found.append(os.fsdecode(entry))
        pos = data.find(tag, end) if end >= 0 else -1
    return found


# ------------------------------------------------------------ refs and garbage (cleanup.py)

REFS = "refs/picobot"
"""A snapshot is named by a ref `refs/picobot/<session>/<tree>`: what a session's snapshots
hold stays until that session goes, and `git gc` drops what no ref, nor the index, holds."""


def pin(shadow: ShadowGit, session: str, tree: str) -> bool:
    """Name `tree` for `session`. False when the tree is gone (a `collect` ran between the
    snapshot and this call): the caller snapshots again. Taken under the snapshot lock, so
    it never races a `collect`."""
    shadow._init()
    with shadow._locked():
        try:
            shadow._run("update-ref", f"{REFS}/{session}/{tree}", tree)
        except NotCheckpointed:
            return False
    return True


def sessions_in(shadow: ShadowGit) -> set[str]:
    """The sessions (as `pin` names them) whose snapshots the repository holds."""
    out = shadow._run("for-each-ref", "--format=%(refname)", REFS)
    return {line.split("/")[2] for line in out.decode().splitlines() if line.count("/") >= 3}


def collect(shadow: ShadowGit, session: str) -> None:
    """Drop `session`'s refs, then every object nothing else holds (other sessions' refs,
    the index): the content only its snapshots held leaves the repository."""
    with shadow._locked():
        out = shadow._run("for-each-ref", "--format=%(refname)", f"{REFS}/{session}")
        names = out.decode().split()
        if names:
            script = "".join(f"delete {name}\n" for name in names).encode()
            shadow._run("update-ref", "--stdin", input=script)
        shadow._run("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        shadow._run("gc", "--prune=now", "--quiet")


def open_repo(repo: Path) -> ShadowGit:
    """The repository at `repo`, for `sessions_in` and `collect` (which read no work tree;
    its workspace is not known from the folder's name)."""
    shadow = ShadowGit(repo.parent, repo, 0)
    shadow.dir = repo
    return shadow

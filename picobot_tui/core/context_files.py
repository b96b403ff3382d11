"""Reading the workspace files that go into the system prompt, confined like read_file.

AGENTS.md, USER.md, kb/*, skills/*/SKILL.md and friends go into every request without a
tool call or an approval, so a repository could otherwise ship `AGENTS.md ->
/proc/self/environ` or `USER.md -> ~/.picobot/config.json` and send the user's keys to the
provider. A file is read only when its resolved real path is inside the resolved workspace
and it is a regular file (checked on the open descriptor, opened non-blocking, so a FIFO
cannot hang the turn). What is read is scrubbed of known secrets, then capped. What is left
out is recorded (`skipped`) so the user can be told. The user's own templates in
`~/.picobot` are read the same way, confined to it, and never from picobot's config,
sessions or logs there (`private`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from picobot_tui.core.secrets import Scrubber

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW


class ConfinedReader:
    """Reads files of one workspace for the prompt; remembers what it had to skip."""

    def __init__(
        self,
        workspace: Path,
        scrub: Scrubber,
        *,
        private: tuple[Path, ...] = (),
        label: str = "",
    ) -> None:
        """`workspace`: the folder reads are confined to (the project, or `~/.picobot` for
        the user's own templates). `private`: files and folders inside it that are never
        read even so (picobot's config, sessions, logs). `label` prefixes the names."""
        self.workspace = Path(workspace)
        self.root = self.workspace.expanduser().resolve()
        self.scrub = scrub
        self.private = tuple(p.expanduser().resolve() for p in private)
        self.label = label
        self.skipped: dict[str, str] = {}
        """Workspace-relative name (after `label`) -> why it was left out (this build)."""

    def rel(self, path: Path) -> str:
        try:
            return self.label + str(path.relative_to(self.workspace))
        except ValueError:
            return str(path)

    def _skip(self, path: Path, why: str) -> None:
        self.skipped.setdefault(self.rel(path), self.scrub(why))

    def inside(self, path: Path) -> Path | None:
        """The real path of `path` when it exists inside the workspace, else None (and
        recorded as skipped unless it simply does not exist)."""
        if not os.path.lexists(path):
            return None
        try:
            real = path.resolve(strict=True)
        except FileNotFoundError:
            self._skip(path, "is a broken symbolic link")
            return None
        except (OSError, RuntimeError) as e:  # a symlink loop: RuntimeError before 3.13
            self._skip(path, f"cannot be resolved ({e})")
            return None
        if not real.is_relative_to(self.root):
            self._skip(path, f"links outside the workspace (to {real})")
            return None
        if any(real.is_relative_to(p) for p in self.private):
            self._skip(path, f"is one of picobot's own files ({real})")
            return None
        return real

    def read(self, path: Path, limit: int) -> tuple[str, int] | None:
        """(scrubbed text capped at `limit` chars, size in bytes), or None when the file is
        absent or may not be read."""
        real = self.inside(path)
        if real is None:
            return None
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError as e:
            self._skip(path, f"cannot be read ({e.strerror or e})")
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                if not stat.S_ISDIR(st.st_mode):
                    self._skip(path, "is not a regular file (a FIFO, device or socket)")
                return None
            # Enough bytes for `limit` chars of 4-byte UTF-8, plus the longest secret
            # spelling, so a key straddling the cut is whole when it is masked.
            want = (limit + self.scrub.longest) * 4 + 4
            data = os.read(fd, want) if want else b""
            chunk = data
            while chunk and len(data) < want:
                chunk = os.read(fd, want - len(data))
                data += chunk
        except OSError as e:
            self._skip(path, f"cannot be read ({e.strerror or e})")
            return None
        finally:
            os.close(fd)
        text = self.scrub(data.decode("utf-8", errors="replace"))  # mask, then cut
        if len(text) > limit or st.st_size > len(data):
            text = (
                text[:limit] + f"\n… [truncated: {st.st_size} bytes in all; "
                f"read {self.rel(path)} with read_file for the rest]"
            )
        return text, st.st_size

    def notes(self, folder: Path, suffixes: set[str]) -> list[Path]:
        """Files under `folder` with these suffixes, sorted, without following symlinked
        directories (a link out is recorded as skipped; the files are checked on read)."""
        if self.inside(folder) is None or not folder.is_dir():
            return []
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            base = Path(dirpath)
            for d in dirnames:
                if (base / d).is_symlink():
                    self.inside(base / d)  # records a link out; links inside are not walked
            found += [base / f for f in filenames if Path(f).suffix in suffixes]
        return sorted(found)

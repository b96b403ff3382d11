"""The prompt's history across runs, one file per workspace, like a shell's history file.

`~/.picobot/data/history/<sha256 of the resolved workspace, 16 hex>.jsonl`, one JSON object
`{"text": ...}` a line, 0600, the newest `MAX_ENTRIES` kept. Secrets are masked with the
runtime's scrubber before a line is written. The app opens it after its first frame (in a
thread); what is sent before that waits here and is written once the file is open.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.paths import picobot_home

if TYPE_CHECKING:
    from picobot_tui.config.settings import Settings
    from picobot_tui.run.runtime import Runtime
    from picobot_tui.widgets.prompt import PromptArea

MAX_ENTRIES = 1000
log = logging.getLogger("picobot")


def history_path(workspace: Path) -> Path:
    import hashlib  # here: ~2 ms of import the first frame does not wait for

    digest = hashlib.sha256(str(workspace.resolve()).encode("utf-8")).hexdigest()[:16]
    return picobot_home() / "data" / "history" / f"{digest}.jsonl"


class PromptHistory:
    """Load once (`open`), then `add` each sent text. Never raises: history is a comfort,
    a disk problem is logged and the app goes on."""

    def __init__(self, limit: int = MAX_ENTRIES) -> None:
        self.limit = limit
        self.path: Path | None = None
        self._scrub: Callable[[str], str] = str
        self._pending: list[str] = []
        self._count = 0
        self._last: str | None = None
        self._lock = threading.Lock()

    def open(self, path: Path, scrub: Callable[[str], str]) -> list[str]:
        """Read the stored entries (oldest first) and start writing to `path`; what was
        added before is written now (and is not in the returned list)."""
        entries = _read(path)[-self.limit :]
        with self._lock:
            self.path, self._scrub = path, scrub
            self._count = len(entries)
            self._last = entries[-1] if entries else None
            pending, self._pending = self._pending, []
            for text in pending:
                self._write(text)
        return entries

    def add(self, text: str) -> None:
        with self._lock:
            if self.path is None:
                self._pending.append(text)
            else:
                self._write(text)

    def _write(self, text: str) -> None:
        assert self.path is not None
        text = self._scrub(text)
        if text == self._last or not text.strip():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, (json.dumps({"text": text}, ensure_ascii=False) + "\n").encode())
            finally:
                os.close(fd)
        except OSError as e:
            log.warning("prompt history: cannot write %s: %s", self.path, e)
            return
        self._last = text
        self._count += 1
        if self._count > self.limit + max(self.limit // 10, 1):
            self._trim()

    def _trim(self) -> None:
        """Keep the newest `limit` entries (now and then, not on every line)."""
        assert self.path is not None
        entries = _read(self.path)[-self.limit :]
        data = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in entries)
        try:
            atomic_write(self.path, data.encode(), 0o600, keep_mode=False)
        except OSError as e:
            log.warning("prompt history: cannot trim %s: %s", self.path, e)
            return
        self._count = len(entries)


def _read(path: Path) -> list[str]:
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        log.warning("prompt history: cannot read %s: %s", path, e)
        return []
    entries = []
    for line in raw.splitlines():
        try:
            text = json_input.loads(line).get("text")
        except (ValueError, AttributeError):
            continue  # a torn or foreign line
        if isinstance(text, str) and text.strip():
            entries.append(text)
    return entries


def load_into(
    history: PromptHistory, prompt: PromptArea, runtime: Runtime | None, settings: Settings | None
) -> None:
    """Open the workspace's history and give it to the prompt (in a thread worker)."""
    assert runtime is not None and settings is not None
    entries = history.open(history_path(settings.workspace_path), runtime.scrub)
    prompt.app.call_from_thread(prompt.load_history, entries)

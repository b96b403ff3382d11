"""The always-allow answers saved for one workspace: `<PICOBOT_HOME>/permissions.json`,
keyed by the workspace's resolved path:

    {"version": 1, "workspaces": {"/home/me/proj": {"alwaysAllow": ["exec(git log:*)"],
                                                   "allowHosts": ["docs.python.org"]}}}

An approval's "always" saves here by default, so a rule saved in one project does not apply
in another; "everywhere" saves to config.json as before (`tools.alwaysAllow`,
`tools.web.allowHosts`), and the rules config.json already holds keep applying everywhere,
as the user saved them. The file is under PICOBOT_HOME, never in the workspace, so a
repository cannot bring rules of its own. A damaged file is reported (its rules apply nowhere
until it is fixed or removed) and never overwritten; it is replaced whole, 0600.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.paths import picobot_home
from picobot_tui.core.private_files import ensure_private_dir, open_private
from picobot_tui.core.saved_rules import SavedRules

VERSION = 1
LOCK_WAIT = 2.0
"""Seconds a save waits for another picobot's save of the same file."""
KEYS = {"tools": "alwaysAllow", "hosts": "allowHosts"}
"""SavedRules attribute -> the file's key."""


def rules_path() -> Path:
    return picobot_home() / "permissions.json"


def workspace_key(workspace: Path) -> str:
    return str(workspace.expanduser().resolve())


def _read(path: Path) -> dict[str, Any]:
    """The file's `workspaces` map; {} when there is no file. ValueError saying what is
    wrong when it cannot be used (bad JSON, another shape, a newer version)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as e:
        raise ValueError(f"it is not UTF-8 text ({e.reason})") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"it is not valid JSON ({e})") from None
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("it must be a JSON object")
    version = data.get("version")
    if version != VERSION:
        raise ValueError(f"its version is {version!r}; this picobot reads version {VERSION}")
    folders = data.get("workspaces", {})
    if not isinstance(folders, dict):
        raise ValueError('"workspaces" must be an object of folder paths')
    return folders


def _folder(folders: dict[str, Any], key: str) -> dict[str, list[str]]:
    """The workspace's entry, checked: each list present is a list of strings."""
    folder = folders.get(key, {})
    if not isinstance(folder, dict):
        raise ValueError(f"the entry of {key} must be an object")
    for name in KEYS.values():
        items = folder.get(name, [])
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise ValueError(f'"{name}" must be a list of strings')
    return {name: list(folder.get(name, [])) for name in KEYS.values() if name in folder}


def load_rules(workspace: Path) -> SavedRules:
    """The rules saved for `workspace`; a file that cannot be read gives none, with the
    problem said (the approval shows it, and saving refuses to overwrite the file)."""
    path = rules_path()
    try:
        folder = _folder(_read(path), workspace_key(workspace))
        return SavedRules(tools=folder.get(KEYS["tools"], []), hosts=folder.get(KEYS["hosts"], []))
    except (OSError, ValueError) as e:
        return SavedRules(
            problem=f"{path} cannot be read: {e}. The rules saved for this workspace do not "
            "apply until it is fixed or removed."
        )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold `<path>.lock` while the file is read and replaced: two picobots saving at once
    lost 126 of 300 rules without it (each wrote back what it had read). Waits LOCK_WAIT
    seconds at most (a save holds it for milliseconds), then says so."""
    ensure_private_dir(path.parent)  # the home, 0700 whatever the umask
    fd = open_private(path.with_name(path.name + ".lock"), os.O_CREAT | os.O_RDWR)
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(f"{path} is being changed by another picobot") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # and the lock with it


def _update(workspace: Path, attr: str, value: str, add: bool) -> tuple[Path, bool]:
    path = rules_path()
    with _locked(path):
        return _update_locked(path, workspace, attr, value, add)


def _update_locked(
    path: Path, workspace: Path, attr: str, value: str, add: bool
) -> tuple[Path, bool]:
    try:
        folders = _read(path)
        key = workspace_key(workspace)
        folder = _folder(folders, key)
        items = folder.get(KEYS[attr], [])
    except ValueError as e:
        raise ValueError(f"{path} cannot be read ({e}): fix or remove it first") from None
    changed = (value not in items) if add else (value in items)
    if not changed:
        return path, False
    entry = dict(folders.get(key, {}))  # keys this picobot does not know are kept
    entry[KEYS[attr]] = [*items, value] if add else [v for v in items if v != value]
    folders[key] = entry
    text = json.dumps({"version": VERSION, "workspaces": folders}, indent=2, ensure_ascii=False)
    atomic_write(path, (text + "\n").encode("utf-8"), 0o600, keep_mode=False)
    return path, True


def save_rule(workspace: Path, attr: str, value: str) -> Path:
    """Add `value` to the workspace's `attr` ("tools" or "hosts"); the file's path.
    ValueError when the file is damaged (it is left as it is), OSError when it cannot be
    written."""
    return _update(workspace, attr, value, add=True)[0]


def remove_rule(workspace: Path, attr: str, value: str) -> Path | None:
    """Remove `value` from the workspace's `attr`; the file's path, or None when the file
    did not hold it. ValueError / OSError as for save_rule."""
    path, changed = _update(workspace, attr, value, add=False)
    return path if changed else None

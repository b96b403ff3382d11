"""The user's answers to "trust this folder?": `<PICOBOT_HOME>/trusted.json`, keyed by the
folder's resolved path (`{"version": 1, "workspaces": {"/path": true}}`).

Only the TUI asks, and only about an implicit workspace (the current directory). A damaged
file counts as no answers (the question comes again); it is replaced whole, 0600.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from picobot_tui.core import json_input
from picobot_tui.core.atomic_write import atomic_write
from picobot_tui.core.paths import picobot_home

log = logging.getLogger("picobot")


def trust_path() -> Path:
    return picobot_home() / "trusted.json"


def _answers(path: Path) -> dict[str, Any]:
    try:
        data = json_input.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        log.warning("%s cannot be read (%s): asking about trust again", path, e)
        return {}
    folders = data.get("workspaces") if isinstance(data, dict) else None
    return folders if isinstance(folders, dict) else {}


def trust_answer(folder: Path) -> bool | None:
    """True or False as the user answered for `folder`, None when never asked."""
    answer = _answers(trust_path()).get(str(folder.expanduser().resolve()))
    return answer if isinstance(answer, bool) else None


def remember_trust(folder: Path, trusted: bool) -> Path:
    """Store the answer for `folder` (other folders' answers are kept); the file's path."""
    path = trust_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    folders = _answers(path)
    folders[str(folder.expanduser().resolve())] = trusted
    text = json.dumps({"version": 1, "workspaces": folders}, indent=2, ensure_ascii=False)
    atomic_write(path, (text + "\n").encode("utf-8"), 0o600, keep_mode=False)
    return path

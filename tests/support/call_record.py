"""`--record-calls DIR`: what each console-script call of a test gave, one JSON line per
call, so two runs of the same tests, one through the worker servers and one cold
(`PICOBOT_TEST_WARM=0`), can be compared call by call (scripts/compare_calls.py).

A call is recorded by `run_cli_env` and `run_on_pty` (tests/headless/conftest.py): its
argv, exit code, stdout and stderr, and the files it leaves in the test's picobot home and
workspace (the session files, the trace lines, what a tool wrote; not the log, nor the
checkpoints' git objects, whose names hash times). What differs between any two runs of
one test (times, random ids, ports, temporary folders) is replaced when they are compared:
what is left must be identical both ways, as issue 23 promises of the warm server.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

directory: Path | None = None
"""Set by tests/conftest.py from --record-calls; None: nothing is recorded."""

nodeid = ""
index = 0

MAX_FILE = 256 * 1024
"""A bigger (or binary) file is recorded by its size and hash."""

SKIP_DIRS = {".git", "logs", "checkpoints", "__pycache__", ".pytest_cache"}


def start_test(test: str) -> None:
    global nodeid, index
    nodeid, index = test, 0


def _files(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            try:
                if path.is_symlink():
                    out[rel] = "-> " + os.readlink(path)
                    continue
                data = path.read_bytes()
            except OSError as e:
                out[rel] = f"<unreadable: {e.strerror}>"
                continue
            if name.endswith(".lock"):
                out[rel] = "<lock>"  # a lock file holds the pid of its holder
            elif len(data) > MAX_FILE or b"\0" in data:
                out[rel] = f"<{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}>"
            else:
                out[rel] = data.decode(errors="replace")
    return out


def record(
    home: Path,
    cwd: Path,
    args: list[str] | tuple[str, ...],
    env: dict[str, str],
    exit_code: int,
    stdout: str,
    stderr: str,
) -> None:
    """Append one call's record to this worker's file (nothing without --record-calls)."""
    global index
    if directory is None:
        return
    index += 1
    entry: dict[str, Any] = {
        "test": nodeid,
        "n": index,
        "route": "cold" if env.get("PICOBOT_SERVER") == "0" else "warm",
        "argv": list(args),
        "exit": exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "home": _files(home),
        "cwd": {} if cwd.is_relative_to(home) else _files(cwd),
    }
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f"{worker}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")

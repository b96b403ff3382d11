"""A SIGKILL in the middle of a restore leaves every file old or new, never torn."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.checkpoints.conftest import KEY, Agent

FILES = 80
RESTORER = """
import sys
from picobot_tui.core.checkpoints.restore import apply_restore, plan_restore
from picobot_tui.core.checkpoints.store import CheckpointStore
from picobot_tui.core.checkpoints.timeline import load_timeline
store = CheckpointStore(sys.argv[1])
plan = plan_restore(store, load_timeline(store, sys.argv[2]), 1)
print("restoring", len(plan.to_restore), flush=True)
apply_restore(store, plan)
print("done", flush=True)
"""


def _content(i: int, which: str) -> bytes:
    line = f"{which} {i} ".encode() * 2000  # ~16-20 KB each, distinct per file and side
    return line + b"\n"


def test_sigkill_mid_restore_leaves_old_or_new(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    old = {i: _content(i, "old") for i in range(FILES)}
    new = {i: _content(i, "new") for i in range(FILES)}
    for i, data in old.items():
        (ws / f"f{i:03}.txt").write_bytes(data)
    agent = Agent(ws)
    for i, data in new.items():
        agent.call(1, "write_file", path=f"f{i:03}.txt", content=data.decode())
    rng = random.Random(14)
    root = agent.store.root
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", RESTORER, str(root), KEY],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("restoring")
        # Once the first file is back (the renames have begun), a random point after it.
        first = ws / "f000.txt"
        while first.read_bytes() != old[0] and proc.poll() is None:
            time.sleep(0.001)
        time.sleep(rng.uniform(0.0, 0.15))  # where to kill, not a timing check
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        seen = {"old": 0, "new": 0}
        for i in range(FILES):
            data = (ws / f"f{i:03}.txt").read_bytes()
            assert data in (old[i], new[i]), f"f{i:03}.txt is torn ({len(data)} bytes)"
            seen["old" if data == old[i] else "new"] += 1
        assert sum(seen.values()) == FILES
        # Put the agent's state back for the next round (what a redo would do).
        for i, data in new.items():
            (ws / f"f{i:03}.txt").write_bytes(data)
    leftovers = [p.name for p in Path(ws).iterdir() if p.name.endswith(".tmp")]
    assert all(name.startswith(".f") for name in leftovers)  # at most a killed temp file

"""#14 Checkpoints (issue 14): what recording every change costs, and a rewind.

- 14a: `edit_file` on a 100 KB file through the checkpoint hook (prior and new state read,
  hashed and kept, one record line) against the same edit without it. Target ≤ 1.1× + 2 ms.
- 14b: the snapshot after an exec that changed one file of a 10,000-file workspace (`git add
  -A`, `write-tree` and the diff against the snapshot before, the changed file recorded)
  against `git add -A && git write-tree` run by a shell on the same tree with a warm index
  of its own. Target ≤ 1.5×.
- 14c: rewinding a turn that changed 100 files (plan + restore). Target under 1 s.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import Result, alternate, median, ratios, report, temp_dir

KEY = "cli:be0c0000-20260101-000000"


def _settings(home: Path):  # noqa: ANN202 (CoreSettings, imported late)
    os.environ["PICOBOT_HOME"] = str(home)
    from picobot_tui.core.settings import CoreSettings

    return CoreSettings()


def run_a(reps: int = 9) -> Result:
    from picobot_tui.core.checkpoints.hook import run_checkpointed
    from picobot_tui.core.tools.base import ToolContext
    from picobot_tui.core.tools.registry import default_registry

    started = time.perf_counter()
    with temp_dir() as tmp:
        settings = _settings(tmp / "home")
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "big.py").write_text("".join(f"line {i:05} of the file\n" for i in range(4200)))
        registry = default_registry(ToolContext(workspace=ws, config=settings.tools))
        counter = iter(range(10**6))

        def edit(checkpointed: bool) -> float:
            times = []
            for _ in range(10):
                i = next(counter) % 4200
                args = {"path": "big.py", "old_text": f"line {i:05} ", "new_text": f"LINE {i:05} "}
                t0 = time.perf_counter()
                if checkpointed:
                    asyncio.run(
                        run_checkpointed(
                            registry,
                            "edit_file",
                            args,
                            settings=settings,
                            session=KEY,
                            turn=1,
                            call_id=f"c{i}",
                        )
                    )
                else:
                    asyncio.run(registry.execute("edit_file", args))
                times.append(time.perf_counter() - t0)
                (ws / "big.py").write_text((ws / "big.py").read_text().replace("LINE", "line"))
            return median(times) * 1e3

        a, b = alternate(lambda: edit(True), lambda: edit(False), reps)
    value, base = median(a), median(b)
    return report(
        Result(
            "14a",
            "edit_file of 100 KB with checkpoints",
            value,
            base,
            "ms",
            median(ratios(a, b)),
            "≤ 1.1× + 2 ms",
            value <= 1.1 * base + 2,
            detail="median of 10 edits per repetition, each in its own event loop",
            samples={"A ms": a, "B ms": b},
            seconds=time.perf_counter() - started,
        )
    )


def run_b(reps: int = 9) -> Result:
    from picobot_tui.core.checkpoints.recorder import Recorder
    from picobot_tui.core.checkpoints.store import checkpoints_root

    started = time.perf_counter()
    with temp_dir() as tmp:
        settings = _settings(tmp / "home")
        ws = tmp / "ws"
        for d in range(100):
            (ws / f"d{d:02}").mkdir(parents=True)
            for f in range(100):
                (ws / f"d{d:02}" / f"f{f:02}.txt").write_text(f"{d} {f}\n")
        recorder = Recorder(checkpoints_root(settings.home), settings.checkpoints)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(tmp / "plain.git"), GIT_WORK_TREE=str(ws))
        subprocess.run(["git", "init", "-q"], env=env, check=True)
        plain = "git add -A && git write-tree"
        subprocess.run(plain, shell=True, env=env, cwd=ws, check=True, capture_output=True)
        state: dict[str, Any] = {"snap": recorder.snapshot(ws), "n": 0}

        def ours() -> float:
            state["n"] += 1
            (ws / "d01" / "f01.txt").write_text(f"change {state['n']}\n")
            t0 = time.perf_counter()
            new = recorder.snapshot(ws)
            recorder.exec_changes(KEY, 1, f"x{state['n']}", "exec", ws, state["snap"], new)
            took = time.perf_counter() - t0
            state["snap"] = new
            return took * 1e3

        def baseline() -> float:
            state["n"] += 1
            (ws / "d02" / "f02.txt").write_text(f"change {state['n']}\n")
            t0 = time.perf_counter()
            subprocess.run(plain, shell=True, env=env, cwd=ws, check=True, capture_output=True)
            return (time.perf_counter() - t0) * 1e3

        a, b = alternate(ours, baseline, reps)
    r = ratios(a, b)
    return report(
        Result(
            "14b",
            "exec snapshot, 10,000 files, one changed",
            median(a),
            median(b),
            "ms",
            median(r),
            "≤ 1.5×",
            median(r) <= 1.5,
            detail="after-snapshot + diff + record vs `git add -A && git write-tree`",
            samples={"A ms": a, "B ms": b, "ratio": r},
            seconds=time.perf_counter() - started,
        )
    )


def run_c(reps: int = 5) -> Result:
    from picobot_tui.core.checkpoints.hook import run_checkpointed
    from picobot_tui.core.checkpoints.restore import apply_restore, plan_restore
    from picobot_tui.core.checkpoints.store import CheckpointStore, checkpoints_root
    from picobot_tui.core.checkpoints.timeline import load_timeline
    from picobot_tui.core.tools.base import ToolContext
    from picobot_tui.core.tools.registry import default_registry

    started = time.perf_counter()
    times = []
    with temp_dir() as tmp:
        settings = _settings(tmp / "home")
        ws = tmp / "ws"
        ws.mkdir()
        registry = default_registry(ToolContext(workspace=ws, config=settings.tools))
        store = CheckpointStore(checkpoints_root(settings.home))
        for rep in range(reps):
            key = f"cli:be0c{rep:04}-20260101-000000"
            for i in range(100):
                (ws / f"f{i:03}.txt").write_text(f"old {i}\n" * 50)

            async def turn(key: str = key) -> None:
                for i in range(100):
                    args = {"path": f"f{i:03}.txt", "content": f"new {i}\n" * 50}
                    await run_checkpointed(
                        registry,
                        "write_file",
                        args,
                        settings=settings,
                        session=key,
                        turn=1,
                        call_id=f"c{i}",
                    )

            asyncio.run(turn())
            t0 = time.perf_counter()
            done = apply_restore(store, plan_restore(store, load_timeline(store, key), 1))
            times.append((time.perf_counter() - t0) * 1e3)
            assert len(done.restored) == 100
    value = median(times)
    return report(
        Result(
            "14c",
            "rewind of a turn that changed 100 files",
            value,
            1000.0,
            "ms",
            value / 1000.0,
            "< 1 s",
            value < 1000.0,
            detail="plan + restore (one sync for the batch)",
            samples={"ms": times},
            seconds=time.perf_counter() - started,
        )
    )


def run(reps: int | None = None, parts: str = "abc") -> list[Result]:
    figures = {"a": run_a, "b": run_b, "c": run_c}
    return [figures[p](reps) if reps else figures[p]() for p in parts]


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else None)

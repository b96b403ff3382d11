"""#17 Hooks (issue 27): what a PreToolUse hook that exits 0 adds to a tool call.

- 17a: a `read_file` call through the tool step (core/tool_step.run_tool) with one
  PreToolUse hook (`cat >/dev/null`: reads its input, exits 0) against the same call with
  no hooks; the yardstick, timed as one, is the hook's bare spawn followed by that plain
  call (a hooked call's order): `/bin/sh -c` of the same command spawned with asyncio, with
  the hook's environment and cwd, fed the same JSON. Target ≤ 1.1× + the spawn (hooked ≤
  yardstick + 10 % of the plain call): picobot adds nothing of its own beyond the hook.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import Result, median, ratios, report, temp_dir

COMMAND = "cat >/dev/null"
CALLS = 40
BUDGET = 100.0  # seconds: at least 3 rounds, then as many as fit (bench/README.md)


async def _bare_spawn(payload: bytes, cwd: Path, env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    await proc.communicate(payload)


def run_a(reps: int = 15) -> Result:
    from picobot_tui.core.hooks.config import HookCommand
    from picobot_tui.core.hooks.fire import HookEntry, Hooks
    from picobot_tui.core.settings import CoreSettings
    from picobot_tui.core.tool_step import run_tool
    from picobot_tui.core.tools.base import ToolContext
    from picobot_tui.core.tools.registry import default_registry
    from picobot_tui.core.turn_state import SessionState, TurnState

    started = time.perf_counter()
    with temp_dir() as tmp:
        os.environ["PICOBOT_HOME"] = str(tmp / "home")
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("alpha\n" * 100)
        settings = CoreSettings()
        settings.checkpoints.enabled = False
        registry = default_registry(ToolContext(workspace=ws, config=settings.tools))
        hook = HookCommand(command=COMMAND)
        hooks = Hooks([HookEntry("PreToolUse", "", hook, "user")], workspace=ws)
        env = hooks.env()  # the hook's own environment and cwd: the same exec for both
        payload = json.dumps({"hook_event_name": "PreToolUse", "tool_input": {}}).encode()
        counter = iter(range(10**6))

        def call() -> dict[str, Any]:
            i = next(counter)
            args = '{"path": "a.txt"}'
            return {"id": f"c{i}", "function": {"name": "read_file", "arguments": args}}

        async def one(with_hooks: Hooks | None) -> float:
            t0 = time.perf_counter()
            steps = run_tool(
                call(),
                1,
                SessionState(history=[]),
                TurnState(),
                settings=settings,
                tools=registry,
                confirm=None,
                record=lambda m: None,
                hooks=with_hooks,
            )
            async for _event in steps:
                pass
            return time.perf_counter() - t0

        async def bare() -> float:
            t0 = time.perf_counter()
            await _bare_spawn(payload, ws, env)
            return time.perf_counter() - t0

        async def plain_then_spawn() -> float:
            # The yardstick, timed as one: the hook's process on its own, then the plain
            # call (the order of a hooked call: the hook runs first).
            t0 = time.perf_counter()
            await _bare_spawn(payload, ws, env)
            await one(None)
            return time.perf_counter() - t0

        async def round_() -> tuple[float, float, float]:
            # Interleaved call by call (hooked, yardstick, plain; then the other way round),
            # so a load spike falls on all three alike.
            a: list[float] = []
            y: list[float] = []
            b: list[float] = []
            for k in range(CALLS):
                order = [("a", one(hooks)), ("y", plain_then_spawn()), ("b", one(None))]
                for name, work in order if k % 2 == 0 else reversed(order):
                    {"a": a, "y": y, "b": b}[name].append(await work)
            return median(a) * 1e3, median(y) * 1e3, median(b) * 1e3

        asyncio.run(round_())  # warm-up, not recorded
        deadline = time.perf_counter() + BUDGET
        rounds: list[tuple[float, float, float]] = []
        while len(rounds) < reps and (len(rounds) < 3 or time.perf_counter() < deadline):
            rounds.append(asyncio.run(round_()))
    a, yard, b = (list(x) for x in zip(*rounds, strict=True))
    value, base, plain = median(a), median(yard), median(b)
    spawn = base - plain
    # Per round: the hooked call against the plain call plus the bare spawn, with the 10 %
    # of the plain call the target allows.
    own = median([x - z - 0.1 * y for x, z, y in rounds])
    return report(
        Result(
            "17a",
            "tool call with a PreToolUse hook (exit 0), vs the hook's bare spawn + the call",
            value,
            base,
            "ms",
            median(ratios(a, yard)),
            "≤ 1.1× + the hook's bare spawn",
            own <= 0,
            detail=f"median of {CALLS} read_file calls per round, interleaved call by call "
            f"with the yardstick: the plain call then the hook's bare spawn (sh -c, its "
            f"environment, its input fed; ~{spawn:.2f} ms); per round, hooked - yardstick "
            f"- 0.1 x plain: {own:+.2f} ms",
            extra={"plain call ms": round(plain, 3), "own ms": round(own, 3)},
            samples={"A ms": a, "yardstick ms": yard, "plain ms": b},
            seconds=time.perf_counter() - started,
        )
    )


def run(reps: int | None = None, parts: str = "a") -> list[Result]:
    return [run_a(reps) if reps else run_a()]


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else None)

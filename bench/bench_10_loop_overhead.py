"""#10 Loop overhead per iteration at 100k tokens of history, against a no-op iteration.

A: `AgentLoop.run_turn` on a resumed session whose whole history (2,000 messages, ~105k
tokens) is in the context, with a model double that answers at once (one short text
chunk and a usage report), so what is timed is the loop itself: system-prompt build, budget
estimate, event dispatch, two session appends (user and assistant) and the trace line.
B: a no-op iteration, the same model double's stream consumed directly with no loop.
Also reported: A with an empty history. Target: the overhead (A − B) under 5 ms.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator

from bench.common import Result, median, report, temp_dir
from bench.fixtures import LONG_KEY, write_long_session

TURNS = 30  # timed turns per repetition


class InstantModel:
    """Answers every request at once: one text chunk, then usage (so the loop's estimator is
    calibrated as it is by a real provider)."""

    def __init__(self) -> None:
        from picobot_tui.core.budget import estimate_messages

        self._estimate = estimate_messages

    def context_window(self, model: str) -> int | None:
        return None

    async def stream(self, request) -> AsyncIterator:  # type: ignore[no-untyped-def]
        from picobot_tui.core.llm.model import TextChunk, UsageChunk

        yield TextChunk("ok")
        yield UsageChunk(len(request.messages) * 50, 1)


async def _turns(loop, session, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        async for _event in loop.run_turn(session, f"question {i}"):
            pass
        times.append(time.perf_counter() - t0)
    return times


async def _noop(model, n: int) -> list[float]:  # type: ignore[no-untyped-def]
    from picobot_tui.core.llm.model import ModelRequest

    request = ModelRequest("m", [{"role": "user", "content": "x"}], [], 10, 0.0)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        async for _chunk in model.stream(request):
            pass
        times.append(time.perf_counter() - t0)
    return times


def run(reps: int = 5) -> Result:
    started = time.perf_counter()
    with temp_dir() as tmp:
        os.environ["PICOBOT_HOME"] = str(tmp)
        from picobot_tui.config.settings import load_settings
        from picobot_tui.run.runtime import build_runtime

        settings, _ = load_settings(tmp / "none.json")
        d = settings.agents.defaults
        d.model = "bench"
        d.max_history_messages = 100_000  # the whole session goes into the context
        d.token_budget = 400_000  # no compression at ~105k tokens
        settings.tools.approval = "auto"
        write_long_session(settings.sessions_dir)
        model = InstantModel()
        rt = build_runtime(settings, model_client=model)
        long = rt.store.open(LONG_KEY, create=False)
        empty = rt.store.open(rt.store.new_key("cli"), create=True)
        context = rt.loop.budget(long).estimated_tokens

        async def main() -> tuple[list[float], list[float], list[float]]:
            await _turns(rt.loop, long, 3)  # loads the session state once
            await _turns(rt.loop, empty, 3)
            a, b, e = [], [], []
            for i in range(reps):
                order = [("a", long), ("b", None), ("e", empty)]
                if i % 2:
                    order.reverse()
                for label, session in order:
                    if session is None:
                        b.append(median(await _noop(model, TURNS)) * 1000)
                    else:
                        times = median(await _turns(rt.loop, session, TURNS)) * 1000
                        (a if label == "a" else e).append(times)
            return a, b, e

        try:
            a, b, e = asyncio.run(main())
        finally:
            long.close()
            empty.close()
            os.environ.pop("PICOBOT_HOME", None)
    overhead = [x - y for x, y in zip(a, b, strict=True)]
    ratio = median([x / y for x, y in zip(a, b, strict=True)])
    value = median(a)
    return report(
        Result(
            "10",
            "loop overhead per iteration at ~100k tokens of history",
            value,
            median(b),
            "ms",
            ratio,
            "report it; < 5 ms",
            median(overhead) < 5.0,
            detail=(
                f"context ~{context:,} tokens; overhead A−B {median(overhead):.2f} ms; "
                f"same loop with an empty history {median(e):.2f} ms"
            ),
            samples={"A ms": a, "B ms": b, "empty ms": e},
            seconds=time.perf_counter() - started,
        )
    )


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
